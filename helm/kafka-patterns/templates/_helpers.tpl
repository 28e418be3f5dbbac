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

{{/* The catalogue's connectors as this release runs them, as a JSON list: each one's
     config with connect.connectorConfig's settings for it over the catalogue's (a
     second release on one PostgreSQL needs a slot and a publication of its own). An
     override naming no catalogue connector fails the render, naming them. */}}
{{- define "kp.connectors" -}}
{{- $overrides := .Values.connect.connectorConfig | default dict -}}
{{- $names := list -}}
{{- range .Values.connectors | default list }}{{ $names = append $names .name }}{{ end -}}
{{- include "kp.onlyJobs" (dict "map" $overrides "names" $names "key" "connect.connectorConfig"
                                "what" "a catalogue connector") -}}
{{- $out := list -}}
{{- range .Values.connectors | default list -}}
{{- $c := deepCopy . -}}
{{- $_ := set $c "config" (mergeOverwrite (deepCopy .config) (deepCopy (index $overrides .name | default dict))) -}}
{{- $out = append $out $c -}}
{{- end -}}
{{- toJson $out -}}
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

{{/* Names of the catalogue jobs of one engine, as a JSON list.
     Args: dict "root" $ "engine" "spark"|"client". */}}
{{- define "kp.jobNames" -}}
{{- $names := list -}}
{{- range .root.Values.jobs }}{{ if eq .engine $.engine }}{{ $names = append $names .name }}{{ end }}{{ end -}}
{{- toJson $names -}}
{{- end -}}

{{/* The catalogue jobs of one engine this release runs, as a JSON list: those named in
     `include` (empty = all), in catalogue order. A name that is not such a job fails
     the render, naming it and the values key.
     Args: dict "root" $ "engine" "spark"|"client" "include" <list> "key" <values key>. */}}
{{- define "kp.jobsOf" -}}
{{- $names := include "kp.jobNames" . | fromJsonArray -}}
{{- $include := .include | default list -}}
{{- $unknown := list -}}
{{- range $include }}{{ if not (has . $names) }}{{ $unknown = append $unknown . }}{{ end }}{{ end -}}
{{- if $unknown -}}
{{- fail (printf "%s: %s not catalogue job(s) with engine: %s (those are: %s)" .key (join ", " (uniq $unknown)) .engine (join ", " $names)) -}}
{{- end -}}
{{- $out := list -}}
{{- /* spark.enabled / clients.enabled: false = none of that engine's jobs. */ -}}
{{- $section := index .root.Values (ternary "spark" "clients" (eq .engine "spark")) -}}
{{- if $section.enabled -}}
{{- range .root.Values.jobs -}}
{{- if and (eq .engine $.engine) (or (not $include) (has .name $include)) }}{{ $out = append $out . }}{{ end -}}
{{- end -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* Fails the render when a key of a per-name values map (jobs, connectors) is not one of `names`.
     Args: dict "map" <dict> "names" <list> "key" <values key> "what" <what the names are>. */}}
{{- define "kp.onlyJobs" -}}
{{- range $name, $_ := .map -}}
{{- if not (has $name $.names) -}}
{{- fail (printf "%s: %s is not %s (those are: %s)" $.key $name $.what (join ", " $.names)) -}}
{{- end -}}
{{- end -}}
{{- end -}}

{{/* The catalogue's Spark jobs this release runs, as a JSON list: spark.jobs.include
     (empty = all), each with its effective schedule (spark.scheduled.schedules wins
     over the catalogue's). Unknown names fail the render, naming them. */}}
{{- define "kp.sparkJobs" -}}
{{- $jobs := include "kp.jobsOf" (dict "root" . "engine" "spark" "include" .Values.spark.jobs.include
                                      "key" "spark.jobs.include") | fromJsonArray -}}
{{- $scheduled := list -}}
{{- range .Values.jobs }}{{ if and (eq .engine "spark") .schedule }}{{ $scheduled = append $scheduled .name }}{{ end }}{{ end -}}
{{- $schedules := .Values.spark.scheduled.schedules | default dict -}}
{{- include "kp.onlyJobs" (dict "map" $schedules "names" $scheduled "key" "spark.scheduled.schedules"
                                "what" "a scheduled catalogue Spark job") -}}
{{- $out := list -}}
{{- range $jobs -}}
{{- $job := deepCopy . -}}
{{- if hasKey $schedules .name -}}{{- $_ := set $job "schedule" (index $schedules .name) -}}{{- end -}}
{{- $out = append $out $job -}}
{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* The project image (spark.image), which runs the Spark jobs and the client jobs. */}}
{{- define "kp.image" -}}
{{- printf "%s:%s" .Values.spark.image.repository (default .Values.spark_version .Values.spark.image.tag) -}}
{{- end -}}

{{/* The environment of every pod that runs a catalogue job (Spark driver and executors,
     client job): its name, Kafka as its user (kp.kafkaEnv), PostgreSQL.
     Passwords are secretKeyRefs only: no secret value is ever rendered.
     Args: dict "root" $ "job" <catalogue job>. */}}
{{- define "kp.jobEnv" -}}
{{- $pg := .root.Values.postgres -}}
- name: KAFKA_PATTERNS_JOB
  value: {{ .job.name | quote }}
{{ include "kp.kafkaEnv" (dict "root" .root "user" .job.name) }}
# The sink database (kafka_patterns.config.settings.postgres_dsn); libpq reads the
# password from PGPASSWORD, so that it never appears in the DSN.
- name: POSTGRES_DSN
  value: {{ printf "host=%s port=%v dbname=%s user=%s" $pg.host $pg.port $pg.database $pg.appUser | quote }}
- name: PGPASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $pg.appPasswordSecret.name }}
      key: {{ $pg.appPasswordSecret.key }}
{{- end -}}

{{/* The environment of a Kafka client as a catalogue job's or user's Kafka user: the
     bootstrap servers, the CA file, SASL_SSL with the password from the Secret named
     after the user.
     Args: dict "root" $ "user" <catalogue job or user name>. */}}
{{- define "kp.kafkaEnv" -}}
{{- $root := .root -}}
{{- $user := include "kp.k8sName" .user -}}
{{- $userName := $user -}}
{{- if include "kp.external" $root -}}
{{- $userName = index $root.Values.kafka.external.userNames .user | default $user -}}
{{- end -}}
- name: KAFKA_BOOTSTRAP_SERVERS
  value: {{ include "kp.bootstrap" $root | quote }}
# KAFKA_CLIENT_<X_Y> -> client setting x.y (kafka_patterns.clients.kafka): TLS + SASL
# as its KafkaUser, whose password the User Operator keeps in a Secret named
# after the user (in bring-your-own-Kafka mode, a Secret of the same name and key).
- name: KAFKA_CLIENT_SECURITY_PROTOCOL
  value: SASL_SSL
- name: KAFKA_CLIENT_SASL_MECHANISM
  value: {{ include "kp.saslMechanism" $root | quote }}
- name: KAFKA_CLIENT_SASL_USERNAME
  value: {{ $userName | quote }}
- name: KAFKA_CLIENT_SASL_PASSWORD
  valueFrom:
    secretKeyRef:
      name: {{ $user }}
      key: password
{{- if include "kp.clusterCaSecret" $root }}
- name: KAFKA_CLIENT_SSL_CA_LOCATION
  value: {{ printf "%s/ca.crt" (include "kp.clusterCaDir" $root) | quote }}
{{- end }}
{{- end -}}

{{/* The volume of the cluster CA certificate (Strimzi's <cluster>-cluster-ca-cert
     Secret, or the brought Kafka's kafka.external.caSecret) as ca.crt, and its mount;
     nothing when the jobs use the system trust store. */}}
{{- define "kp.clusterCaVolume" -}}
{{- with include "kp.clusterCaSecret" . -}}
- name: cluster-ca
  secret:
    secretName: {{ . }}
    items:
      - {key: {{ include "kp.clusterCaKey" $ }}, path: ca.crt}
{{- end -}}
{{- end -}}

{{- define "kp.clusterCaMount" -}}
{{- if include "kp.clusterCaSecret" . -}}
- name: cluster-ca
  mountPath: {{ include "kp.clusterCaDir" . }}
  readOnly: true
{{- end -}}
{{- end -}}

{{/* Where the jobs' pods see that certificate (ca.crt). */}}
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

{{/* The topics a job writes: its outputs ("postgres:<table>" outputs are not topics),
     its state changelogs and its dead-letter topic. */}}
{{- define "kp.writtenTopics" -}}
{{- $out := list -}}
{{- range .outputs -}}{{- if not (hasPrefix "postgres:" .) -}}{{- $out = append $out . -}}{{- end -}}{{- end -}}
{{- range .state -}}{{- $out = append $out . -}}{{- end -}}
{{- with .deadletter -}}{{- $out = append $out . -}}{{- end -}}
{{- toJson $out -}}
{{- end -}}

{{/* A user that replays dead letters (make replay-dlq writes a letter back to the topic
     it came from): Write + Describe on every input of a job with a deadletter topic, as
     KafkaUser ACLs. The rule of kafka_patterns.config.acls.replay_acls. Arg: the root. */}}
{{- define "kp.replayAcls" -}}
{{- $inputs := list -}}
{{- range .Values.jobs -}}{{- if .deadletter -}}{{- $inputs = concat $inputs .inputs -}}{{- end -}}{{- end -}}
{{- range $inputs | uniq | sortAlpha }}
- resource: {type: topic, name: {{ . | quote }}, patternType: literal}
  operations: [Write, Describe]
{{- end -}}
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
