{{- /*
Only Go's built-in template functions (no Sprig, no include/toYaml): the chart renders the same
in Helm and in test/integration/infra-helm.test.ts. Labels are YAML flow mappings, so they fit
at any indentation.
*/ -}}
{{- define "mcp-gateway.name" -}}
{{- if .Values.nameOverride }}{{ .Values.nameOverride }}{{ else }}{{ .Chart.Name }}{{ end -}}
{{- end -}}

{{- define "mcp-gateway.fullname" -}}
{{- if .Values.fullnameOverride }}{{ .Values.fullnameOverride }}
{{- else if eq .Release.Name .Chart.Name }}{{ .Release.Name }}
{{- else }}{{ printf "%s-%s" .Release.Name .Chart.Name }}{{ end -}}
{{- end -}}

{{- define "mcp-gateway.secretName" -}}
{{- if .Values.secret.existingSecret }}{{ .Values.secret.existingSecret }}{{ else }}{{ template "mcp-gateway.fullname" . }}{{ end -}}
{{- end -}}

{{- define "mcp-gateway.selectorLabels" -}}
{app.kubernetes.io/name: {{ template "mcp-gateway.name" . }}, app.kubernetes.io/instance: {{ .Release.Name }}}
{{- end -}}

{{- define "mcp-gateway.labels" -}}
{app.kubernetes.io/name: {{ template "mcp-gateway.name" . }}, app.kubernetes.io/instance: {{ .Release.Name }}, app.kubernetes.io/version: {{ printf "%q" .Chart.AppVersion }}, app.kubernetes.io/managed-by: {{ .Release.Service }}, helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}}
{{- end -}}

{{- /*
A value as a YAML flow node (JSON-like), for the Kubernetes objects values pass through as
written (extraVolumes, extraVolumeMounts) without Sprig's toYaml. Go's %q quoting is valid in
a YAML double-quoted scalar.
*/ -}}
{{- define "mcp-gateway.flow" -}}
{{- $type := printf "%T" . -}}
{{- if eq $type "map[string]interface {}" -}}
{ {{- $first := true -}}
{{- range $key, $value := . -}}
{{- if not $first }}, {{ end -}}
{{- $first = false -}}
{{- printf "%q" $key }}: {{ template "mcp-gateway.flow" $value -}}
{{- end -}} }
{{- else if eq $type "[]interface {}" -}}
[ {{- range $i, $value := . -}}
{{- if $i }}, {{ end -}}
{{- template "mcp-gateway.flow" $value -}}
{{- end -}} ]
{{- else if eq $type "string" -}}
{{- printf "%q" . -}}
{{- else if eq $type "<nil>" -}}
null
{{- else -}}
{{- printf "%v" . -}}
{{- end -}}
{{- end -}}
