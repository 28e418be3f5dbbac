{{/* The spec of a job's SparkApplication (also the template of a scheduled one).
     Args: dict "root" $ "job" <catalogue job> "restartPolicy" <policy>. */}}
{{- define "kp.sparkAppSpec" -}}
{{- $root := .root -}}
{{- $job := .job -}}
{{- $spark := $root.Values.spark -}}
{{- $pg := $root.Values.postgres -}}
{{- $user := include "kp.k8sName" $job.name -}}
type: Python
pythonVersion: "3"
mode: cluster
image: {{ printf "%s:%s" $spark.image.repository (default $root.Values.spark_version $spark.image.tag) | quote }}
imagePullPolicy: {{ $spark.image.pullPolicy }}
sparkVersion: {{ $root.Values.spark_version | quote }}
mainApplicationFile: {{ $spark.launcher }}
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
  # The cluster CA certificate (Strimzi's <cluster>-cluster-ca-cert Secret) as a file.
  - name: cluster-ca
    secret:
      secretName: {{ include "kp.clusterCaSecret" $root }}
      items:
        - {key: ca.crt, path: ca.crt}
{{- range $role := list "driver" "executor" }}
{{- $res := index $spark $role }}
{{ $role }}:
  {{- if eq $role "executor" }}
  instances: {{ $res.instances }}
  {{- else }}
  serviceAccount: {{ $spark.serviceAccount }}
  {{- end }}
  cores: {{ $res.cores }}
  memory: {{ $res.memory | quote }}
  labels:
    app.kubernetes.io/name: {{ $root.Chart.Name }}
    app.kubernetes.io/instance: {{ $root.Release.Name | trunc 63 | trimSuffix "-" }}
    kafka-patterns/job: {{ $job.name }}
  volumeMounts:
    - name: checkpoints
      mountPath: {{ $spark.checkpoint.mountPath }}
    - name: cluster-ca
      mountPath: {{ include "kp.clusterCaDir" $root }}
      readOnly: true
  env:
    - name: KAFKA_PATTERNS_JOB
      value: {{ $job.name | quote }}
    - name: KAFKA_BOOTSTRAP_SERVERS
      value: {{ include "kp.bootstrap" $root | quote }}
    # KAFKA_CLIENT_<X_Y> -> client setting x.y (kafka_patterns.clients): TLS + SCRAM
    # as the job's KafkaUser, whose password the User Operator keeps in a Secret.
    - name: KAFKA_CLIENT_SECURITY_PROTOCOL
      value: SASL_SSL
    - name: KAFKA_CLIENT_SASL_MECHANISM
      value: SCRAM-SHA-512
    - name: KAFKA_CLIENT_SASL_USERNAME
      value: {{ $user | quote }}
    - name: KAFKA_CLIENT_SASL_PASSWORD
      valueFrom:
        secretKeyRef:
          name: {{ $user }}
          key: password
    - name: KAFKA_CLIENT_SSL_CA_LOCATION
      value: {{ printf "%s/ca.crt" (include "kp.clusterCaDir" $root) | quote }}
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
