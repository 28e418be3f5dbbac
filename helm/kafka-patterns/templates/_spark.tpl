{{/* The spec of a job's SparkApplication (also the template of a scheduled one).
     Args: dict "root" $ "job" <catalogue job> "restartPolicy" <policy>. */}}
{{- define "kp.sparkAppSpec" -}}
{{- $root := .root -}}
{{- $job := .job -}}
{{- $spark := $root.Values.spark -}}
{{- $pg := $root.Values.postgres -}}
{{- $user := include "kp.k8sName" $job.name -}}
{{- $userName := $user -}}
{{- if include "kp.external" $root -}}
{{- $userName = index $root.Values.kafka.external.userNames $job.name | default $user -}}
{{- end -}}
{{- $caSecret := include "kp.clusterCaSecret" $root -}}
type: Python
pythonVersion: "3"
mode: cluster
image: {{ printf "%s:%s" $spark.image.repository (default $root.Values.spark_version $spark.image.tag) | quote }}
imagePullPolicy: {{ $spark.image.pullPolicy }}
sparkVersion: {{ $root.Values.spark_version | quote }}
mainApplicationFile: {{ $spark.launcher }}
{{- with $spark.sparkConf }}
sparkConf:
  {{- range $k, $v := . }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end }}
# The launcher runs the job's module with the job's arguments.
arguments:
  {{- toYaml (concat (list $job.module) ($job.args | default list)) | nindent 2 }}
restartPolicy:
  {{- toYaml .restartPolicy | nindent 2 }}
volumes:
  - name: checkpoints
    {{- if $spark.checkpoint.claimName }}
    persistentVolumeClaim:
      claimName: {{ $spark.checkpoint.claimName }}
    {{- else }}
    emptyDir: {}
    {{- end }}
  {{- if $caSecret }}
  # The cluster CA certificate (Strimzi's <cluster>-cluster-ca-cert Secret, or the
  # brought Kafka's kafka.external.caSecret) as a file.
  - name: cluster-ca
    secret:
      secretName: {{ $caSecret }}
      items:
        - {key: {{ include "kp.clusterCaKey" $root }}, path: ca.crt}
  {{- end }}
{{- range $role := list "driver" "executor" }}
{{- $res := index $spark $role }}
{{ $role }}:
  {{- if eq $role "executor" }}
  instances: {{ $res.instances }}
  {{- else }}
  serviceAccount: {{ $spark.serviceAccount }}
  {{- end }}
  cores: {{ $res.cores }}
  {{- with $res.coreRequest }}
  coreRequest: {{ . | quote }}
  {{- end }}
  {{- with $res.coreLimit }}
  coreLimit: {{ . | quote }}
  {{- end }}
  memory: {{ $res.memory | quote }}
  labels:
    app.kubernetes.io/name: {{ $root.Chart.Name }}
    app.kubernetes.io/instance: {{ $root.Release.Name | trunc 63 | trimSuffix "-" }}
    kafka-patterns/job: {{ $job.name }}
  volumeMounts:
    - name: checkpoints
      mountPath: {{ $spark.checkpoint.mountPath }}
    {{- if $caSecret }}
    - name: cluster-ca
      mountPath: {{ include "kp.clusterCaDir" $root }}
      readOnly: true
    {{- end }}
  env:
    - name: KAFKA_PATTERNS_JOB
      value: {{ $job.name | quote }}
    - name: KAFKA_BOOTSTRAP_SERVERS
      value: {{ include "kp.bootstrap" $root | quote }}
    # KAFKA_CLIENT_<X_Y> -> client setting x.y (kafka_patterns.clients): TLS + SASL
    # as the job's KafkaUser, whose password the User Operator keeps in a Secret named
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
    {{- if $caSecret }}
    - name: KAFKA_CLIENT_SSL_CA_LOCATION
      value: {{ printf "%s/ca.crt" (include "kp.clusterCaDir" $root) | quote }}
    {{- end }}
    # The sink database (kafka_patterns.settings.postgres_dsn); libpq reads the
    # password from PGPASSWORD, so that it never appears in the DSN.
    - name: POSTGRES_DSN
      value: {{ printf "host=%s port=%v dbname=%s user=%s" $pg.host $pg.port $pg.database $pg.appUser | quote }}
    - name: PGPASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ $pg.appPasswordSecret.name }}
          key: {{ $pg.appPasswordSecret.key }}
    # Structured Streaming checkpoints (kafka_patterns.settings.checkpoint_root).
    - name: CHECKPOINT_ROOT
      value: {{ $spark.checkpoint.mountPath | quote }}
{{- end }}
{{- end -}}
