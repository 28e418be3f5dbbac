{{/* How each client job module runs on Kubernetes, from its command line
     (spark-jobs/src/kafka_patterns/jobs/<module>.py), keyed by catalogue `module`:
       memberArgs: what makes each pod a member of its own, given after the catalogue's
         arguments; $(POD_NAME) is the pod's name (downward API), which starts with the
         Deployment's name, the job's name: the prefix its KafkaUser's ACLs allow.
       single: one pod at most (not shared out by a group).
       once: runs to completion, not until stopped.
     A client job whose module is not here fails the render: its runtime needs deciding. */}}
{{- define "kp.clientRuntimes" -}}
# A consumer-group member; --worker-id names its rows in work_done.
kafka_patterns.jobs.work_queue: {memberArgs: [--worker-id, "$(POD_NAME)"]}
# A share consumer; --consumer-id names its rows in share_done.
kafka_patterns.jobs.share_queue: {memberArgs: [--consumer-id, "$(POD_NAME)"]}
# A consumer-group member that commits before processing.
kafka_patterns.jobs.at_most_once: {}
# Transactional consume-transform-produce: one transactional.id per producer. A deleted
# pod's successor has another name, so the zombie is fenced by its group generation
# (send_offsets_to_transaction with the group metadata, KIP-447), not by the id, and its
# open transaction aborts after the transaction timeout.
kafka_patterns.jobs.transactional_copier: {memberArgs: [--transactional-id, "$(POD_NAME)"]}
kafka_patterns.jobs.request_reply: {memberArgs: [--transactional-id, "$(POD_NAME)"]}
# Assigns itself every partition and keeps state and offsets under one --consumer name
# (default: the job's): a second pod would apply every record twice.
kafka_patterns.jobs.self_managed_offsets: {single: true}
# Transactional like the copier, and it holds the state of every sensor (rebuilt from
# its whole changelog on start): a second pod's partitions would be stale in its state
# after a rebalance. One pod, its own transactional.id.
kafka_patterns.jobs.changelog_state: {single: true, memberArgs: [--transactional-id, "$(POD_NAME)"]}
# Reads a run's readings up to the end offsets, writes their aggregate and exits; needs
# --run and a start (clients.args, or pattern_harness.kube_jobs.run_client_once).
kafka_patterns.jobs.replay: {once: true}
{{- end -}}

{{/* The pod spec of a client job. Args: dict "root" $ "job" <catalogue job>
     "runtime" <its kp.clientRuntimes entry> "restartPolicy" Always|Never
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
