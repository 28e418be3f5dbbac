{{/* The pod spec of a client job. Args: dict "root" $ "job" <catalogue job>
     "runtime" <its catalogue `kubernetes:` entry> "restartPolicy" Always|Never
     "labels" <the pods' labels>. */}}
{{- define "kp.clientPodSpec" -}}
{{- $clients := .root.Values.clients -}}
{{- $args := concat (list .job.module) (.runtime.memberArgs | default list)
                    (index $clients.args .job.name | default list) -}}
{{- $env := printf "%s\n%s" `- name: POD_NAME
  valueFrom:
    fieldRef: {fieldPath: metadata.name}` (include "kp.jobEnv" (dict "root" .root "job" .job)) -}}
{{- include "kp.pythonPodSpec" (dict "root" .root "container" "job" "args" $args "env" $env
                                     "resources" $clients.resources "spread" $clients.topologySpread
                                     "labels" .labels "restartPolicy" .restartPolicy) -}}
{{- end -}}

{{/* The pod spec of a kafka_patterns module run as a plain Python process on the
     project image (client jobs, the lag exporter, the canary): unprivileged, read-only
     root, the cluster CA mounted.
     Args: dict "root" $ "container" <container name> "args" <the module, its arguments>
     "env" <env entries, YAML> "resources" <resources> "labels" <the pods' labels>
     "restartPolicy" Always|Never, and optionally "spread" <a topologySpread value>,
     "metricsPort" <the port it serves Prometheus metrics on>,
     "terminationGracePeriodSeconds" <seconds>. */}}
{{- define "kp.pythonPodSpec" -}}
{{- $root := .root -}}
restartPolicy: {{ .restartPolicy }}
# They talk to Kafka (and PostgreSQL), never to the Kubernetes API.
automountServiceAccountToken: false
{{- with .terminationGracePeriodSeconds }}
terminationGracePeriodSeconds: {{ . }}
{{- end }}
{{- if and .spread .spread.enabled }}
topologySpreadConstraints:
  {{- include "kp.topologySpread" (dict "spread" .spread "labels" .labels) | nindent 2 }}
{{- end }}
securityContext:
  # The image's own unprivileged user (spark-jobs/Dockerfile: USER 185).
  runAsNonRoot: true
  seccompProfile: {type: RuntimeDefault}
containers:
  - name: {{ .container }}
    image: {{ include "kp.image" $root | quote }}
    imagePullPolicy: {{ $root.Values.spark.image.pullPolicy }}
    # Plain Python on the Spark image, through the launcher the Spark applications use
    # (spark.launcher); tini as PID 1 passes SIGTERM on (a Python PID 1 would ignore it
    # unless the job handles it) and reaps.
    command: [/usr/bin/tini, --, python3, {{ trimPrefix "local://" $root.Values.spark.launcher | quote }}]
    # The module, then its arguments (a client job's: the pod's own, clients.args'). A
    # catalogue job reads its catalogue arguments itself (KAFKA_PATTERNS_JOB), before these.
    args:
      {{- toYaml (.args | toStrings) | nindent 6 }}
    {{- with .metricsPort }}
    # Prometheus scrapes /metrics here (templates/pod-monitors.yaml).
    ports:
      - {name: metrics, containerPort: {{ . }}, protocol: TCP}
    # Ready once it listens: a TCP connect, not a scrape (a lag scrape queries Kafka).
    readinessProbe:
      tcpSocket: {port: metrics}
      periodSeconds: 10
    {{- end }}
    env:
      {{- .env | nindent 6 }}
    {{- with .resources }}
    resources:
      {{- toYaml . | nindent 6 }}
    {{- end }}
    securityContext:
      allowPrivilegeEscalation: false
      # They write nothing but to Kafka and PostgreSQL (/tmp for anything else).
      readOnlyRootFilesystem: true
      capabilities: {drop: [ALL]}
    volumeMounts:
      - {name: tmp, mountPath: /tmp}
      {{- with include "kp.clusterCaMount" $root }}
      {{- . | nindent 6 }}
      {{- end }}
volumes:
  - name: tmp
    emptyDir: {}
  {{- with include "kp.clusterCaVolume" $root }}
  {{- . | nindent 2 }}
  {{- end }}
{{- end -}}
