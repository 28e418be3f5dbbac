{{/* The spec of a job's SparkApplication (also the template of a scheduled one).
     Args: dict "root" $ "job" <catalogue job> "restartPolicy" <policy>. */}}
{{- define "kp.sparkAppSpec" -}}
{{- $root := .root -}}
{{- $job := .job -}}
{{- $spark := $root.Values.spark -}}
type: Python
pythonVersion: "3"
mode: cluster
image: {{ include "kp.image" $root | quote }}
imagePullPolicy: {{ $spark.image.pullPolicy }}
sparkVersion: {{ $root.Values.spark_version | quote }}
mainApplicationFile: {{ $spark.launcher }}
{{- with $spark.sparkConf }}
sparkConf:
  {{- range $k, $v := . }}
  {{ $k }}: {{ $v | toString | quote }}
  {{- end }}
{{- end }}
# The launcher runs the job's module; the job reads its catalogue arguments itself
# (told which job it is by KAFKA_PATTERNS_JOB).
arguments:
  - {{ $job.module | quote }}
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
  {{- with include "kp.clusterCaVolume" $root }}
  {{- . | nindent 2 }}
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
  {{- if eq $role "driver" }}
  # The driver serves the job's Prometheus metrics here (KP_METRICS_PORT below); the
  # Spark drivers' PodMonitor scrapes the port by its name.
  ports:
    - {name: metrics, containerPort: {{ $root.Values.monitoring.sparkDrivers.port }}, protocol: TCP}
  {{- end }}
  labels:
    app.kubernetes.io/name: {{ $root.Chart.Name }}
    app.kubernetes.io/instance: {{ $root.Release.Name | trunc 63 | trimSuffix "-" }}
    kafka-patterns/job: {{ $job.name }}
  volumeMounts:
    - name: checkpoints
      mountPath: {{ $spark.checkpoint.mountPath }}
    {{- with include "kp.clusterCaMount" $root }}
    {{- . | nindent 4 }}
    {{- end }}
  env:
    {{- include "kp.jobEnv" (dict "root" $root "job" $job) | nindent 4 }}
    # Structured Streaming checkpoints (kafka_patterns.config.settings.checkpoint_root).
    - name: CHECKPOINT_ROOT
      value: {{ $spark.checkpoint.mountPath | quote }}
    {{- if eq $role "driver" }}
    # Where the job serves its streaming metrics (kafka_patterns.runtime.streaming_metrics): on
    # every address, for Prometheus to reach (its default is 127.0.0.1).
    - name: KP_METRICS_PORT
      value: {{ $root.Values.monitoring.sparkDrivers.port | quote }}
    - name: KP_METRICS_ADDR
      value: 0.0.0.0
    {{- end }}
{{- end }}
{{- end -}}
