{{/* The chart name, or nameOverride. */}}
{{- define "pms.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release-qualified name of every resource. */}}
{{- define "pms.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 63 | trimSuffix "-" }}
{{- else if contains (include "pms.name" .) .Release.Name }}
{{- .Release.Name | trunc 63 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name (include "pms.name" .) | trunc 63 | trimSuffix "-" }}
{{- end }}
{{- end }}

{{- define "pms.selectorLabels" -}}
app.kubernetes.io/name: {{ include "pms.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "pms.labels" -}}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{ include "pms.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end }}

{{/* The Secret with the keys: an existing one, or the one this chart creates. */}}
{{- define "pms.secretName" -}}
{{- default (include "pms.fullname" .) .Values.secrets.existingSecret }}
{{- end }}

{{- define "pms.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/*
The service key the chart's Secret holds. Without one every profile, with all its messages, is readable
by anyone who reaches the Service, and chat is billed to the upstream key: the chart refuses to render.
*/}}
{{- define "pms.serviceApiKey" -}}
{{- required "secrets.serviceApiKey is required: without it anyone who reaches the service can read every profile. Set it (e.g. --set secrets.serviceApiKey=$(openssl rand -hex 32)) or name a secrets.existingSecret that has a SERVICE_API_KEY key." .Values.secrets.serviceApiKey }}
{{- end }}

{{/*
With secrets.existingSecret, that Secret must have SERVICE_API_KEY. Checked at install and upgrade when
the Secret can be read (lookup returns nothing under `helm template`); the pods also refuse to start
without the key, since the Deployment does not mark it optional.
*/}}
{{- define "pms.checkExistingSecret" -}}
{{- with .Values.secrets.existingSecret }}
{{- $secret := lookup "v1" "Secret" $.Release.Namespace . }}
{{- if and $secret (not (hasKey ($secret.data | default dict) "SERVICE_API_KEY")) }}
{{- fail (printf "secrets.existingSecret %s has no SERVICE_API_KEY key: without it anyone who reaches the service can read every profile." .) }}
{{- end }}
{{- end }}
{{- end }}
