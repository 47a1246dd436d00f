{{/*
The chart renders deploy/'s own files (linked under files/), so that
deploy/ and the chart cannot drift apart: each YAML document is parsed,
changed only where a value says so, and printed again. The defaults change
nothing but what deploy/kustomization.yaml changes too: the label
app.kubernetes.io/part-of, the two images, and the two ConfigMaps it
generates (the scheduler configuration's under kustomize's content-hash
name).
*/}}

{{/* The namespace every object names; deploy/ spells it gpusched-system. */}}
{{- define "gpusched.namespace" -}}
{{- required "namespace.name is required" .Values.namespace.name -}}
{{- end -}}

{{/*
The documents of one file of deploy/ with its namespace replaced, each
rendered by "gpusched.object". Called with (dict "root" $ "path" PATH).
*/}}
{{- define "gpusched.file" -}}
{{- $root := .root -}}
{{- $text := $root.Files.Get .path | replace "gpusched-system" (include "gpusched.namespace" $root) -}}
{{- range $index, $doc := regexSplit "(?m)^---[ \t]*$" $text -1 }}
{{- $object := fromYaml $doc -}}
{{- if hasKey $object "Error" -}}
{{- fail (printf "%s, document %d: %s" $.path $index (get $object "Error")) -}}
{{- end -}}
{{- if $object }}
{{- include "gpusched.object" (dict "root" $root "object" $object) }}
{{- end -}}
{{- end -}}
{{- end -}}

{{/*
One object: changed by the values, then printed, unless a value removes it.
*/}}
{{- define "gpusched.object" -}}
{{- $root := .root -}}
{{- $o := .object -}}
{{- $values := $root.Values -}}
{{- $keep := true -}}
{{- $labels := default (dict) $o.metadata.labels -}}
{{- $_ := set $labels "app.kubernetes.io/part-of" "gpusched" -}}
{{- $_ := set $o.metadata "labels" $labels -}}
{{- if eq $o.kind "Namespace" -}}
{{- $keep = $values.namespace.create -}}
{{- else if eq $o.kind "Deployment" -}}
{{- $_ := include "gpusched.deployment" (dict "root" $root "deployment" $o) -}}
{{- else if and (eq $o.kind "ClusterRole") (eq $o.metadata.name "gpusched") -}}
{{- $_ := include "gpusched.clusterRole" (dict "root" $root "role" $o) -}}
{{- else if and (eq $o.kind "Role") (eq $o.metadata.name "gpusched") -}}
{{- $_ := include "gpusched.role" (dict "root" $root "role" $o) -}}
{{- else if eq $o.kind "NetworkPolicy" -}}
{{- $_ := include "gpusched.networkPolicy" (dict "root" $root "policy" $o) -}}
{{- else if and (eq $o.kind "Service") (eq $o.metadata.name "gpusched-metrics") -}}
{{- $keep = $values.metrics.service -}}
{{- if not $values.metrics.scrapeAnnotations -}}
{{- $_ := unset $o.metadata "annotations" -}}
{{- end -}}
{{- end -}}
{{- if $keep }}
---
{{ toYaml $o }}
{{- end -}}
{{- end -}}

{{/* The ports, and the listeners behind them, that a value turns off. */}}
{{- define "gpusched.offPorts" -}}
{{- $off := list -}}
{{- if not .Values.webhook.enabled -}}{{- $off = append $off "webhook" -}}{{- end -}}
{{- if not .Values.visibility.enabled -}}{{- $off = append $off "visibility" -}}{{- end -}}
{{- toJson $off -}}
{{- end -}}

{{/*
The Deployment: replicas, images, resources, and gpusched's arguments,
ports and volumes for the policy source and the listeners that are on.
*/}}
{{- define "gpusched.deployment" -}}
{{- $root := .root -}}
{{- $values := $root.Values -}}
{{- $spec := .deployment.spec -}}
{{- $_ := set $spec "replicas" (int $values.replicas) -}}
{{- $pod := $spec.template.spec -}}
{{- range $container := $pod.containers -}}
{{- if eq $container.name "kube-scheduler" -}}
{{- $_ := set $container "image" (printf "%s:%s" $values.schedulerImage.repository $values.schedulerImage.tag) -}}
{{- $_ := set $container "imagePullPolicy" $values.schedulerImage.pullPolicy -}}
{{- if $values.resources.kubeScheduler -}}
{{- $_ := set $container "resources" $values.resources.kubeScheduler -}}
{{- end -}}
{{- else if eq $container.name "gpusched" -}}
{{- $_ := include "gpusched.container" (dict "root" $root "container" $container) -}}
{{- end -}}
{{- end -}}
{{- $volumes := list -}}
{{- range $volume := $pod.volumes -}}
{{- if eq $volume.name "scheduler-config" -}}
{{- $_ := set $volume.configMap "name" (include "gpusched.schedulerConfigName" $root) -}}
{{- end -}}
{{- if not (and (eq $volume.name "policy") (eq $values.policy.source "kueue")) -}}
{{- $volumes = append $volumes $volume -}}
{{- end -}}
{{- end -}}
{{- $_ := set $pod "volumes" $volumes -}}
{{- end -}}

{{/* The gpusched container. */}}
{{- define "gpusched.container" -}}
{{- $root := .root -}}
{{- $values := $root.Values -}}
{{- $c := .container -}}
{{- $off := include "gpusched.offPorts" $root | fromJsonArray -}}
{{- $_ := set $c "image" (printf "%s:%s" $values.image.repository (default $root.Chart.AppVersion $values.image.tag)) -}}
{{- $_ := set $c "imagePullPolicy" $values.image.pullPolicy -}}
{{- if $values.resources.gpusched -}}
{{- $_ := set $c "resources" $values.resources.gpusched -}}
{{- end -}}
{{- $args := list -}}
{{- range $arg := $c.args -}}
{{- $flag := regexReplaceAll "=.*" $arg "" -}}
{{- if and (eq $flag "--policy") (eq $values.policy.source "kueue") -}}
{{- $args = append $args "--policy-source=kueue" -}}
{{- else if not (has (trimSuffix "-listen" (trimPrefix "--" $flag)) $off) -}}
{{- $args = append $args $arg -}}
{{- end -}}
{{- end -}}
{{- $_ := set $c "args" (concat $args (include "gpusched.namespaceArgs" $root | fromJsonArray) $values.extraArgs) -}}
{{- $ports := list -}}
{{- range $port := $c.ports -}}
{{- if not (has $port.name $off) -}}
{{- $ports = append $ports $port -}}
{{- end -}}
{{- end -}}
{{- $_ := set $c "ports" $ports -}}
{{- $mounts := list -}}
{{- range $mount := $c.volumeMounts -}}
{{- if not (and (eq $mount.name "policy") (eq $values.policy.source "kueue")) -}}
{{- $mounts = append $mounts $mount -}}
{{- end -}}
{{- end -}}
{{- $_ := set $c "volumeMounts" $mounts -}}
{{- end -}}

{{/*
gpusched's flags whose defaults name gpusched-system: set only in another
namespace, to the same names there.
*/}}
{{- define "gpusched.namespaceArgs" -}}
{{- $ns := include "gpusched.namespace" . -}}
{{- $args := list -}}
{{- if ne $ns "gpusched-system" -}}
{{- if .Values.webhook.enabled -}}
{{- $args = append $args (printf "--webhook-secret=%s/gpusched-webhook-tls" $ns) -}}
{{- $args = append $args (printf "--webhook-dns-names=gpusched-webhook.%s.svc,gpusched-webhook.%s.svc.cluster.local" $ns $ns) -}}
{{- end -}}
{{- if .Values.visibility.enabled -}}
{{- $args = append $args (printf "--visibility-secret=%s/gpusched-visibility-tls" $ns) -}}
{{- $args = append $args (printf "--visibility-dns-names=gpusched-visibility.%s.svc,gpusched-visibility.%s.svc.cluster.local" $ns $ns) -}}
{{- end -}}
{{- $args = append $args (printf "--runtime-history=%s/gpusched-runtime-history" $ns) -}}
{{- $args = append $args (printf "--requeue-state=%s/gpusched-requeue-state" $ns) -}}
{{- end -}}
{{- toJson $args -}}
{{- end -}}

{{/*
ClusterRole gpusched without the rules of a listener that is off: the
caBundle of the webhook's own configuration (by its name, so that other
rules on webhook configurations stay), or the visibility API's APIService
and access reviews.
*/}}
{{- define "gpusched.clusterRole" -}}
{{- $values := .root.Values -}}
{{- $rules := list -}}
{{- range $rule := .role.rules -}}
{{- $names := default (list) $rule.resourceNames -}}
{{- $webhook := and (has "mutatingwebhookconfigurations" $rule.resources) (has "gpusched" $names) -}}
{{- $visibility := or (has "apiservices" $rule.resources) (has "subjectaccessreviews" $rule.resources) -}}
{{- if not (or (and $webhook (not $values.webhook.enabled)) (and $visibility (not $values.visibility.enabled))) -}}
{{- $rules = append $rules $rule -}}
{{- end -}}
{{- end -}}
{{- $_ := set .role "rules" $rules -}}
{{- end -}}

{{/*
Role gpusched without the Secret of a listener that is off, and without
Secrets at all when both are.
*/}}
{{- define "gpusched.role" -}}
{{- $values := .root.Values -}}
{{- $drop := list -}}
{{- if not $values.webhook.enabled -}}{{- $drop = append $drop "gpusched-webhook-tls" -}}{{- end -}}
{{- if not $values.visibility.enabled -}}{{- $drop = append $drop "gpusched-visibility-tls" -}}{{- end -}}
{{- $noSecrets := and (not $values.webhook.enabled) (not $values.visibility.enabled) -}}
{{- $rules := list -}}
{{- range $rule := .role.rules -}}
{{- if has "secrets" $rule.resources -}}
{{- if $rule.resourceNames -}}
{{- $names := list -}}
{{- range $name := $rule.resourceNames -}}
{{- if not (has $name $drop) -}}{{- $names = append $names $name -}}{{- end -}}
{{- end -}}
{{- $_ := set $rule "resourceNames" $names -}}
{{- end -}}
{{- if not $noSecrets -}}{{- $rules = append $rules $rule -}}{{- end -}}
{{- else -}}
{{- $rules = append $rules $rule -}}
{{- end -}}
{{- end -}}
{{- $_ := set .role "rules" $rules -}}
{{- end -}}

{{/* The NetworkPolicy without the ports of a listener that is off. */}}
{{- define "gpusched.networkPolicy" -}}
{{- $values := .root.Values -}}
{{- $drop := list -}}
{{- if not $values.webhook.enabled -}}{{- $drop = append $drop 9443 -}}{{- end -}}
{{- if not $values.visibility.enabled -}}{{- $drop = append $drop 8443 -}}{{- end -}}
{{- $ingress := list -}}
{{- range $rule := .policy.spec.ingress -}}
{{- $ports := list -}}
{{- range $port := $rule.ports -}}
{{- if not (has (int $port.port) $drop) -}}{{- $ports = append $ports $port -}}{{- end -}}
{{- end -}}
{{- if $ports -}}
{{- $_ := set $rule "ports" $ports -}}
{{- $ingress = append $ingress $rule -}}
{{- end -}}
{{- end -}}
{{- $_ := set .policy.spec "ingress" $ingress -}}
{{- end -}}

{{/* kube-scheduler's configuration, in the chart's namespace. */}}
{{- define "gpusched.schedulerConfig" -}}
{{- .Files.Get "files/kube-scheduler-config.yaml" | replace "gpusched-system" (include "gpusched.namespace" .) -}}
{{- end -}}

{{/*
The name kustomize's configMapGenerator gives the scheduler configuration's
ConfigMap: gpusched-scheduler-config-<hash>, the hash being the first ten
hex digits of the SHA-256 of the JSON {"data","kind","name"}, with 0, 1, 3,
a and e spelled g, h, k, m and t (sigs.k8s.io/kustomize/api/hasher, as
kubectl 1.37 vendors it). "name" is always "" there: the hasher looks the
name up as one field called "metadata/name", which no ConfigMap has. The
same name as `kubectl apply -k deploy/` gives it, and the same effect: a
changed configuration is a new name, so the Deployment rolls.
*/}}
{{- define "gpusched.schedulerConfigName" -}}
{{- $data := dict "kube-scheduler-config.yaml" (include "gpusched.schedulerConfig" .) -}}
{{- $hash := dict "data" $data "kind" "ConfigMap" "name" "" | toJson | sha256sum | trunc 10 -}}
{{- printf "gpusched-scheduler-config-%s" ($hash | replace "0" "g" | replace "1" "h" | replace "3" "k" | replace "a" "m" | replace "e" "t") -}}
{{- end -}}
