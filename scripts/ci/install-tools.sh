# shellcheck shell=bash
# Sourced by .ci/run (and usable locally as root): installs from Debian the programs the
# tests use when they are missing — ripgrep (the grep tool's fast path), bubblewrap and socat
# (the OS sandbox of @anthropic-ai/sandbox-runtime), python3 (hook scripts), tmux, chromium
# (the HTML export is checked in a real headless browser), strace (the JSONL store's write
# path is checked syscall by syscall).
# Quiet on success, loud on failure.

keel_install_tools() {
  local log=/tmp/keel-install-tools.log missing=()
  command -v rg >/dev/null 2>&1 || missing+=(ripgrep)
  command -v bwrap >/dev/null 2>&1 || missing+=(bubblewrap)
  command -v socat >/dev/null 2>&1 || missing+=(socat)
  command -v python3 >/dev/null 2>&1 || missing+=(python3)
  command -v tmux >/dev/null 2>&1 || missing+=(tmux)
  [ -x /usr/bin/chromium ] || missing+=(chromium)
  command -v strace >/dev/null 2>&1 || missing+=(strace)
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" != 0 ]; then
    echo "install-tools: missing ${missing[*]}; install them (Debian: apt-get install ${missing[*]})" >&2
    return 1
  fi
  { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"; } >"$log" 2>&1 ||
    { echo "install-tools: apt-get install ${missing[*]} failed (log: $log)" >&2; tail -n 20 "$log" >&2; return 1; }
}

keel_install_tools
