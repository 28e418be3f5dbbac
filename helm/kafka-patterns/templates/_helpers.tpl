{{/*
Names and labels shared by every template.
*/}}

{{/* A Kubernetes name (DNS-1123, <= 63) from a Kafka/catalogue name: topic names
     may hold dots, underscores and capitals. A name that would be cut gets a hash
     of the original, so that two long names cannot collide. */}}
{{- define "kp.k8sName" -}}
{{- $n := . | lower | replace "." "-" | replace "_" "-" -}}
{{- if gt (len $n) 63 -}}
{{- printf "%s-%s" (trunc 54 $n | trimSuffix "-") (sha256sum . | trunc 8) -}}
{{- else -}}
{{- $n -}}
{{- end -}}
{{- end -}}

{{- define "kp.cluster" -}}
{{- default .Values.cluster.name .Values.kafka.clusterName | trunc 40 | trimSuffix "-" -}}
{{- end -}}

{{- define "kp.connectName" -}}
{{- printf "%s-connect" (include "kp.cluster" .) -}}
{{- end -}}

{{/* "true" in bring-your-own-Kafka mode (kafka.external.enabled): no Strimzi object
     is rendered, the jobs use kafka.external's bootstrap, CA and SASL mechanism. */}}
{{- define "kp.external" -}}
{{- if .Values.kafka.external.enabled -}}
{{- if not .Values.kafka.external.bootstrap -}}
{{- fail "kafka.external.enabled is true but kafka.external.bootstrap is empty: set the bootstrap servers (host:port,...) of your Kafka's SASL_SSL listener" -}}
{{- end -}}
true
{{- end -}}
{{- end -}}

{{/* Bootstrap servers of the jobs: the TLS listener's bootstrap Service Strimzi
     creates, or the brought Kafka's. */}}
{{- define "kp.bootstrap" -}}
{{- if include "kp.external" . -}}
{{- .Values.kafka.external.bootstrap -}}
{{- else -}}
{{- printf "%s-kafka-bootstrap.%s.svc:%v" (include "kp.cluster" .) .Release.Namespace .Values.kafka.listener.port -}}
{{- end -}}
{{- end -}}

{{/* Secret with the cluster CA certificate: the one Strimzi creates, or the brought
     Kafka's (empty: the system trust store). */}}
{{- define "kp.clusterCaSecret" -}}
{{- if include "kp.external" . -}}
{{- .Values.kafka.external.caSecret.name -}}
{{- else -}}
{{- printf "%s-cluster-ca-cert" (include "kp.cluster" .) -}}
{{- end -}}
{{- end -}}

{{/* Key of the CA certificate in that Secret. */}}
{{- define "kp.clusterCaKey" -}}
{{- if include "kp.external" . -}}
{{- .Values.kafka.external.caSecret.key | default "ca.crt" -}}
{{- else -}}
ca.crt
{{- end -}}
{{- end -}}

{{/* SASL mechanism of the jobs' Kafka clients. */}}
{{- define "kp.saslMechanism" -}}
{{- if include "kp.external" . -}}
{{- .Values.kafka.external.saslMechanism | default "SCRAM-SHA-512" -}}
{{- else -}}
SCRAM-SHA-512
{{- end -}}
{{- end -}}

{{/* The catalogue's Spark jobs this release runs, as a JSON list: spark.jobs.include
     (empty = all), each with its effective schedule (spark.scheduled.schedules wins
     over the catalogue's). Unknown names fail the render, naming them. */}}
{{- define "kp.sparkJobs" -}}
{{- $spark := list -}}
{{- $scheduled := list -}}
{{- range .Values.jobs -}}
{{- if eq .engine "spark" -}}
{{- $spark = append $spark .name -}}
{{- if .schedule }}{{ $scheduled = append $scheduled .name }}{{ end -}}
{{- end -}}
{{- end -}}
{{- $include := .Values.spark.jobs.include | default list -}}
{{- $unknown := list -}}
{{- range $include -}}{{- if not (has . $spark) }}{{ $unknown = append $unknown . }}{{ end -}}{{- end -}}
{{- if $unknown -}}
{{- fail (printf "spark.jobs.include: %s not catalogue job(s) with engine: spark (those are: %s)" (join ", " (uniq $unknown)) (join ", " $spark)) -}}
{{- end -}}
{{- $schedules := .Values.spark.scheduled.schedules | default dict -}}
{{- range $name, $_ := $schedules -}}
{{- if not (has $name $scheduled) -}}
{{- fail (printf "spark.scheduled.schedules: %s is not a scheduled catalogue Spark job (those are: %s)" $name (join ", " $scheduled)) -}}
{{- end -}}
{{- end -}}
{{- $out := list -}}
{{- range .Values.jobs -}}
{{- if and (eq .engine "spark") (or (not $include) (has .name $include)) -}}
{{- $job := deepCopy . -}}
{{- if hasKey $schedules .name -}}{{- $_ := set $job "schedule" (index $schedules .name) -}}{{- end -}}
{{- $out = append $out $job -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* Where Spark pods see that certificate (ca.crt). */}}
{{- define "kp.clusterCaDir" -}}
/etc/kafka-patterns/cluster-ca
{{- end -}}

{{- define "kp.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name | trunc 63 | trimSuffix "-" }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: kafka-patterns
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end -}}

{{/* Labels of a Strimzi custom resource: ours plus the cluster selector. */}}
{{- define "kp.strimziLabels" -}}
{{ include "kp.labels" . }}
strimzi.io/cluster: {{ include "kp.cluster" . }}
{{- end -}}

{{/* The topics a job writes: its outputs ("postgres:<table>" outputs are not topics)
     and its dead-letter topic. */}}
{{- define "kp.writtenTopics" -}}
{{- $out := list -}}
{{- range .outputs -}}{{- if not (hasPrefix "postgres:" .) -}}{{- $out = append $out . -}}{{- end -}}{{- end -}}
{{- with .deadletter -}}{{- $out = append $out . -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* topologySpreadConstraints for pods with the given labels.
     Args: dict "spread" <values.topologySpread> "labels" <matchLabels dict>. */}}
{{- define "kp.topologySpread" -}}
- maxSkew: 1
  topologyKey: {{ .spread.topologyKey }}
  whenUnsatisfiable: {{ .spread.whenUnsatisfiable }}
  labelSelector:
    matchLabels:
      {{- toYaml .labels | nindent 6 }}
{{- end -}}
