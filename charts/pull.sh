#!/usr/bin/env bash
# Pulls the pinned chart archives once per machine into charts/<component>-<version>.tgz (never committed:
# .gitignore has charts/*.tgz). Needs the `helm` CLI and network access to the chart repositories.
#
#   npm run charts:pull            # pull what is missing
#   npm run charts:pull -- --force # pull again
#
# Pins: spec "Components" table. Keep them equal to PINNED_CHARTS in infra/monitoring/constants.ts and to the
# monitoring:*Version keys of Pulumi.<stack>.yaml (a test checks all three).
set -euo pipefail
# CHARTS_DIR: where the archives go (tests point it at a scratch directory).
cd "${CHARTS_DIR:-$(dirname "$0")}"

# component  chart-reference                                                    version
PINS=(
  "logstore  oci://ghcr.io/grafana-community/helm-charts/loki                  14.1.0"
  "viewer    oci://ghcr.io/grafana-community/helm-charts/grafana               12.3.2"
  "collector https://grafana.github.io/helm-charts#alloy                       1.8.1"
  "metrics   https://prometheus-community.github.io/helm-charts#prometheus     29.21.0"
  # Model serving (llm-d guides' pins; PINNED_CHARTS in infra/serving/constants.ts).
  "llm-d-modelservice https://llm-d-incubation.github.io/llm-d-modelservice/#llm-d-modelservice v0.4.5"
  "inferencepool      oci://registry.k8s.io/gateway-api-inference-extension/charts/inferencepool v1.3.0"
  # Model autoscaling (KEDA_CHART in infra/autoscaling/constants.ts).
  "keda               https://kedacore.github.io/charts#keda 2.20.2"
)

force=0
[ "${1:-}" = "--force" ] && force=1

HELM="${HELM:-helm}"
if ! command -v "$HELM" >/dev/null 2>&1; then
  echo "charts/pull.sh: the helm CLI is required (https://helm.sh/docs/intro/install/)" >&2
  exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

for pin in "${PINS[@]}"; do
  read -r component ref version <<<"$pin"
  target="${component}-${version}.tgz"
  if [ -f "$target" ] && [ "$force" -eq 0 ]; then
    echo "have $target"
    continue
  fi
  rm -rf "${tmp:?}"/*
  case "$ref" in
    oci://*) "$HELM" pull "$ref" --version "$version" --destination "$tmp" ;;
    *) "$HELM" pull "${ref#*#}" --repo "${ref%%#*}" --version "$version" --destination "$tmp" ;;
  esac
  pulled=("$tmp"/*.tgz)
  if [ "${#pulled[@]}" -ne 1 ] || [ ! -f "${pulled[0]}" ]; then
    echo "charts/pull.sh: expected one archive for $component $version, got: ${pulled[*]}" >&2
    exit 1
  fi
  mv "${pulled[0]}" "$target"
  echo "pulled $target"
done
