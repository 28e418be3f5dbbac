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

{{/* Address of the TLS listener (the bootstrap Service Strimzi creates). */}}
{{- define "kp.bootstrap" -}}
{{- printf "%s-kafka-bootstrap.%s.svc:%v" (include "kp.cluster" .) .Release.Namespace .Values.kafka.listener.port -}}
{{- end -}}

{{/* Secret with the cluster CA certificate Strimzi creates. */}}
{{- define "kp.clusterCaSecret" -}}
{{- printf "%s-cluster-ca-cert" (include "kp.cluster" .) -}}
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

{{/* Topic names of a job's outputs: "postgres:<table>" outputs are not topics. */}}
{{- define "kp.outputTopics" -}}
{{- $out := list -}}
{{- range . -}}{{- if not (hasPrefix "postgres:" .) -}}{{- $out = append $out . -}}{{- end -}}{{- end -}}
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
