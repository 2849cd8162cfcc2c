{{/* Names: <release>-varnish-edge, or the release name alone when it already holds the chart's name. */}}
{{- define "varnish-edge.fullname" -}}
{{- if .Values.fullnameOverride -}}
{{- .Values.fullnameOverride | trunc 40 | trimSuffix "-" -}}
{{- else if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "varnish-edge.name" -}}{{ include "varnish-edge.fullname" .ctx }}-{{ .component }}{{- end -}}

{{- define "varnish-edge.labels" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
app.kubernetes.io/part-of: varnish-edge
app.kubernetes.io/managed-by: {{ .ctx.Release.Service }}
app.kubernetes.io/version: {{ .ctx.Chart.AppVersion | quote }}
helm.sh/chart: {{ printf "%s-%s" .ctx.Chart.Name .ctx.Chart.Version }}
{{- with .ctx.Values.commonLabels }}
{{ toYaml . }}
{{- end }}
{{- end -}}

{{/* The labels a component's pods are selected by (never changed after install). */}}
{{- define "varnish-edge.selector" -}}
app.kubernetes.io/name: {{ .ctx.Chart.Name }}
app.kubernetes.io/instance: {{ .ctx.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "varnish-edge.serviceAccountName" -}}
{{- if .Values.serviceAccount.create -}}
{{- default (include "varnish-edge.fullname" .) .Values.serviceAccount.name -}}
{{- else -}}
{{- default "default" .Values.serviceAccount.name -}}
{{- end -}}
{{- end -}}

{{- define "varnish-edge.secretName" -}}
{{- default (printf "%s-secrets" (include "varnish-edge.fullname" .)) .Values.secrets.existingSecret -}}
{{- end -}}

{{/* A Service's full DNS name: (dict "ctx" $ "component" "purger") */}}
{{- define "varnish-edge.fqdn" -}}
{{- printf "%s.%s.svc.%s" (include "varnish-edge.name" .) .ctx.Release.Namespace .ctx.Values.clusterDomain -}}
{{- end -}}

{{/* ORIGIN_URL, required: a chart without it renders nothing. */}}
{{- define "varnish-edge.originUrl" -}}
{{- required "origin.url is required: your WordPress as Varnish reaches it, http://HOST[:PORT] (--set origin.url=http://wordpress.blog.svc.cluster.local:80)" .Values.origin.url -}}
{{- end -}}

{{- define "varnish-edge.externalRedis" -}}{{ if .Values.redis.external.url }}true{{ end }}{{- end -}}

{{/* Sentinel in use (ours or the external one's): "true" or "". */}}
{{- define "varnish-edge.sentinel" -}}
{{- if .Values.redis.external.url -}}
{{- if .Values.redis.external.sentinels }}true{{ end -}}
{{- else if .Values.valkey.sentinel.enabled }}true{{ end -}}
{{- end -}}

{{/* Valkey server pod N's stable name (the StatefulSet's, through its headless Service). */}}
{{- define "varnish-edge.valkeyHost" -}}
{{- printf "%s-%d.%s" (include "varnish-edge.name" (dict "ctx" .ctx "component" "valkey")) (int .index) (include "varnish-edge.fqdn" (dict "ctx" .ctx "component" "valkey-headless")) -}}
{{- end -}}

{{/* host:port of every sentinel, comma-separated: ours (the StatefulSet's pods) or the external ones. */}}
{{- define "varnish-edge.sentinels" -}}
{{- if .Values.redis.external.url -}}
{{- join "," .Values.redis.external.sentinels -}}
{{- else -}}
{{- $ctx := . -}}
{{- $list := list -}}
{{- range $i := until (int .Values.valkey.sentinel.replicas) -}}
{{- $list = append $list (printf "%s-%d.%s:26379" (include "varnish-edge.name" (dict "ctx" $ctx "component" "sentinel")) $i (include "varnish-edge.fqdn" (dict "ctx" $ctx "component" "sentinel-headless"))) -}}
{{- end -}}
{{- join "," $list -}}
{{- end -}}
{{- end -}}

{{/* REDIS_URL: the external one, or the seed server (with Sentinel only its scheme and db count). */}}
{{- define "varnish-edge.redisUrl" -}}
{{- if .Values.redis.external.url -}}
{{- .Values.redis.external.url -}}
{{- else -}}
{{- printf "redis://%s:6379" (include "varnish-edge.valkeyHost" (dict "ctx" . "index" 0)) -}}
{{- end -}}
{{- end -}}

{{- define "varnish-edge.podSecurityContext" -}}
runAsNonRoot: true
runAsUser: {{ .runAsUser }}
runAsGroup: {{ .runAsGroup }}
fsGroup: {{ .runAsGroup }}
fsGroupChangePolicy: OnRootMismatch
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{- define "varnish-edge.containerSecurityContext" -}}
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
runAsNonRoot: true
privileged: false
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end -}}

{{/* The /run/secrets volume with only the keys named in .keys: (dict "ctx" $ "keys" (list ...)) */}}
{{- define "varnish-edge.secretVolume" -}}
- name: secrets
  secret:
    secretName: {{ include "varnish-edge.secretName" .ctx }}
    defaultMode: 0440
    items:
{{- range .keys }}
      - key: {{ . }}
        path: {{ . }}
{{- end }}
{{- end -}}

{{/* Spread over nodes and zones, preferred (pods still schedule on a one-node cluster):
     (dict "ctx" $ "component" "varnish" "values" .Values.varnish) */}}
{{- define "varnish-edge.placement" -}}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- if .values.affinity }}
affinity:
  {{- toYaml .values.affinity | nindent 2 }}
{{- else }}
affinity:
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 100
        podAffinityTerm:
          topologyKey: kubernetes.io/hostname
          labelSelector:
            matchLabels:
              {{- include "varnish-edge.selector" . | nindent 14 }}
{{- end }}
{{- if .values.topologySpreadConstraints }}
topologySpreadConstraints:
  {{- toYaml .values.topologySpreadConstraints | nindent 2 }}
{{- else }}
topologySpreadConstraints:
{{- range list "kubernetes.io/hostname" "topology.kubernetes.io/zone" }}
  - maxSkew: 1
    topologyKey: {{ . }}
    whenUnsatisfiable: ScheduleAnyway
    labelSelector:
      matchLabels:
        {{- include "varnish-edge.selector" $ | nindent 8 }}
{{- end }}
{{- end }}
{{- with .values.priorityClassName }}
priorityClassName: {{ . }}
{{- end }}
{{- end -}}
