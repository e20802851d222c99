{{/* Chart name, truncated to the 63 characters of a DNS label. */}}
{{- define "mcp-gateway.name" -}}
{{- default .Chart.Name .Values.nameOverride | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Release full name; the "-management" Service suffix must still fit in 63 characters. */}}
{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}
{{- .Values.fullnameOverride | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- $name := default .Chart.Name .Values.nameOverride }}
{{- if contains $name .Release.Name }}
{{- .Release.Name | trunc 52 | trimSuffix "-" }}
{{- else }}
{{- printf "%s-%s" .Release.Name $name | trunc 52 | trimSuffix "-" }}
{{- end }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.chart" -}}
{{- printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" | trunc 63 | trimSuffix "-" }}
{{- end }}

{{/* Pod selector labels: shared by the Deployment, both Services, the PDB and the NetworkPolicy. */}}
{{- define "mcp-gateway.selectorLabels" -}}
app.kubernetes.io/name: {{ include "mcp-gateway.name" . }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end }}

{{- define "mcp-gateway.labels" -}}
helm.sh/chart: {{ include "mcp-gateway.chart" . }}
{{ include "mcp-gateway.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/part-of: mcp-gateway
{{- end }}

{{- define "mcp-gateway.serviceAccountName" -}}
{{- if .Values.serviceAccount.create }}
{{- default (include "mcp-gateway.fullname" .) .Values.serviceAccount.name }}
{{- else }}
{{- default "default" .Values.serviceAccount.name }}
{{- end }}
{{- end }}

{{- define "mcp-gateway.image" -}}
{{- printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end }}

{{/* Mounted path of the rendered `mcp:` config: the value of MCP_CONFIG_FILE. */}}
{{- define "mcp-gateway.configFile" -}}
{{- printf "%s/mcp-config.yaml" (trimSuffix "/" .Values.gateway.configDir) }}
{{- end }}

{{/* drain + preStop + 5 s of margin unless set; refuses a value that would cut the drain short. */}}
{{- define "mcp-gateway.terminationGracePeriodSeconds" -}}
{{- $floor := add (int .Values.shutdown.drainPeriodSeconds) (int .Values.shutdown.preStopSleepSeconds) }}
{{- $set := .Values.shutdown.terminationGracePeriodSeconds }}
{{- if kindIs "invalid" $set }}
{{- add $floor 5 }}
{{- else if le (int $set) (int $floor) }}
{{- fail (printf "shutdown.terminationGracePeriodSeconds (%d) must be larger than shutdown.drainPeriodSeconds + shutdown.preStopSleepSeconds (%d)" (int $set) (int $floor)) }}
{{- else }}
{{- int $set }}
{{- end }}
{{- end }}

{{/* The Secret MCP_SESSION_KEYS is read from: the operator's, the generated one, or none (empty). */}}
{{- define "mcp-gateway.sessionKeysSecretName" -}}
{{- if .Values.sessionKeys.existingSecret }}
{{- .Values.sessionKeys.existingSecret }}
{{- else if .Values.sessionKeys.generate }}
{{- printf "%s-session-keys" (include "mcp-gateway.fullname" .) }}
{{- end }}
{{- end }}

{{/*
resources.limits.memory in MiB (Ki, Mi, Gi, Ti, k, M, G, T or plain bytes), or "" when unset.
*/}}
{{- define "mcp-gateway.memoryLimitMi" -}}
{{- $limit := "" }}
{{- with .Values.resources }}{{- with .limits }}{{- with .memory }}{{- $limit = toString . }}{{- end }}{{- end }}{{- end }}
{{- if $limit }}
{{- $units := dict "Ki" 0.0009765625 "Mi" 1.0 "Gi" 1024.0 "Ti" 1048576.0 "k" 0.00095367431640625 "M" 0.95367431640625 "G" 953.67431640625 "T" 953674.31640625 }}
{{- $mi := 0.0 }}
{{- $matched := false }}
{{- range $suffix, $factor := $units }}
{{- if and (not $matched) (hasSuffix $suffix $limit) }}
{{- $mi = mulf (float64 (trimSuffix $suffix $limit)) $factor }}
{{- $matched = true }}
{{- end }}
{{- end }}
{{- if not $matched }}{{- $mi = divf (float64 $limit) 1048576.0 }}{{- end }}
{{- printf "%d" (int64 $mi) }}
{{- end }}
{{- end }}

{{/*
--max-old-space-size in MB: gateway.heapPercentOfMemoryLimit of the memory limit, or "" when
either is unset or 0 (the heap must fit the container, not the node: the chart's README.md,
"Values checked before install, monitors, memory").
*/}}
{{- define "mcp-gateway.maxOldSpaceMb" -}}
{{- $pct := int (default 0 .Values.gateway.heapPercentOfMemoryLimit) }}
{{- $mi := include "mcp-gateway.memoryLimitMi" . }}
{{- if and (gt $pct 0) $mi }}
{{- printf "%d" (div (mul (int64 $mi) $pct) 100) }}
{{- end }}
{{- end }}
