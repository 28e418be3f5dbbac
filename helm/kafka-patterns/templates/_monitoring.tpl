{{/* Which parts of monitoring run: each of the first three gives "true" or nothing. */}}

{{/* Strimzi's Kafka Exporter: only beside a Strimzi Kafka. */}}
{{- define "kp.kafkaExporter" -}}
{{- if and .Values.monitoring.kafkaExporter.enabled (not (include "kp.external" .)) -}}true{{- end -}}
{{- end -}}

{{/* The lag exporter; auto = where the Kafka Exporter does not run: one source of
     kafka_consumergroup_lag, so that sums of it count each group once. */}}
{{- define "kp.lagExporter" -}}
{{- $on := toString .Values.monitoring.lagExporter.enabled -}}
{{- if or (eq $on "true") (and (eq $on "auto") (not (include "kp.kafkaExporter" .))) -}}true{{- end -}}
{{- end -}}

{{/* PodMonitors; auto = when the cluster serves the API. `helm template` knows no
     cluster: pass --api-versions monitoring.coreos.com/v1/PodMonitor, or set true. */}}
{{- define "kp.podMonitors" -}}
{{- $on := toString .Values.monitoring.podMonitors.enabled -}}
{{- if or (eq $on "true") (and (eq $on "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PodMonitor")) -}}true{{- end -}}
{{- end -}}

{{/* "true" when the chart renders its PrometheusRule (monitoring.prometheusRule.enabled:
     true, or auto and the cluster serves the API). */}}
{{- define "kp.prometheusRule" -}}
{{- $on := toString .Values.monitoring.prometheusRule.enabled -}}
{{- if or (eq $on "true") (and (eq $on "auto") (.Capabilities.APIVersions.Has "monitoring.coreos.com/v1/PrometheusRule")) -}}true{{- end -}}
{{- end -}}

{{/* The metrics processes of templates/metrics-deployments.yaml that run, as a JSON
     list: name, catalogue user, module and arguments, port, resources. Each serves on
     0.0.0.0 (their default is 127.0.0.1: unreachable from Prometheus). */}}
{{- define "kp.metricsApps" -}}
{{- $m := .Values.monitoring -}}
{{- $apps := list -}}
{{- if include "kp.lagExporter" . -}}
{{- $l := $m.lagExporter -}}
{{- $args := list "kafka_patterns.monitoring.lag_exporter" "--metrics-port" $l.port "--metrics-addr" "0.0.0.0" -}}
{{- with $l.groupsRegex }}{{ $args = concat $args (list "--groups-regex" .) }}{{ end -}}
{{- $apps = append $apps (dict "name" "lag-exporter" "user" $l.user "args" $args "port" $l.port
                                "resources" $l.resources) -}}
{{- end -}}
{{- if $m.canary.enabled -}}
{{- $c := $m.canary -}}
{{- $topics := list -}}
{{- range .Values.topics }}{{ $topics = append $topics .name }}{{ end -}}
{{- if not (has $c.topic $topics) -}}
{{- fail (printf "monitoring.canary.topic: %s is not a catalogue topic (catalogue/catalogue.yaml topics:): the canary needs its own topic, with the catalogue's settings" $c.topic) -}}
{{- end -}}
{{- $args := list "kafka_patterns.monitoring.canary" "--topic" $c.topic "--group" $c.group "--rate" $c.rate
                  "--grace-seconds" $c.graceSeconds "--metrics-port" $c.port "--metrics-addr" "0.0.0.0" -}}
{{- /* On SIGTERM it waits up to graceSeconds for delivery reports, then as long for
       the probes still unread, and prints its summary: give it that time. */ -}}
{{- $apps = append $apps (dict "name" "canary" "user" $c.user "args" $args "port" $c.port
                                "resources" $c.resources "terminationGracePeriodSeconds" (add (mul 2 $c.graceSeconds) 15)) -}}
{{- end -}}
{{- range $apps -}}
{{- if not (has .user (include "kp.catalogueUsers" $ | fromJsonArray)) -}}
{{- fail (printf "the %s runs as Kafka user %s, which is not a user of the catalogue (catalogue/catalogue.yaml users:): add it there, or give the %s one of its users (monitoring values)" .name .user .name) -}}
{{- end -}}
{{- end -}}
{{- toJson $apps -}}
{{- end -}}

{{/* The names of the catalogue's users that are not jobs, as a JSON list. */}}
{{- define "kp.catalogueUsers" -}}
{{- $names := list -}}
{{- range .Values.users | default list }}{{ $names = append $names .name }}{{ end -}}
{{- toJson $names -}}
{{- end -}}
