# Shared by Benchmarks/peers/service-pages and Benchmarks/peers/service-layouts: sourced, not run.
#
# Conventions are Benchmarks/peers/run's: FEEDLAYOUT_BINARY=PATH measures that binary, otherwise this checkout's
# release build is built (scripts/build-release); inputs are generated into .bench/ (outside
# git) by the generators in Benchmarks/inputs/ with the same markers run uses, so both share them; Python for the
# generators is .bench/venv (made over Debian's python3, as run makes it, with Pillow); progress goes to standard
# error as `[NAME HH:MM:SS] …`, the Markdown result to standard output.
#
# The caller sets `bench_name` before sourcing, and calls `stop_everything` from its EXIT trap: every process
# started here (nginx, the service, samplers) is recorded and stopped by its PID, never by name.

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
bench="$root/.bench"
started_pids=()

# A command that fails under `set -e` says which one it was (die says its own reason and exits without this).
trap 'status=$?; log "FAILED at line $LINENO: $BASH_COMMAND (status $status)"' ERR

log() { printf '[%s %s] %s\n' "$bench_name" "$(date +%H:%M:%S)" "$*" >&2; }
die() { log "FAILED: $*"; exit 1; }

# apt-get install -y of the Debian packages that are missing. Debian's nginx package starts the system nginx
# (port 80, every address) when it is installed; a policy-rc.d that refuses service starts keeps it stopped for the
# install (only when the machine has none already): these benchmarks start their own nginx, on 127.0.0.1 only.
install_packages() {
  local missing=() package
  for package in "$@"; do
    dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
  done
  ((${#missing[@]} == 0)) && return 0
  log "installing Debian packages: ${missing[*]}"
  local sudo="" policy=/usr/sbin/policy-rc.d made_policy="" status=0
  if [[ "$(id -u)" -ne 0 ]]; then
    command -v sudo >/dev/null || die "run as root or install sudo to add: ${missing[*]}"
    sudo=sudo
  fi
  if [[ ! -e "$policy" ]]; then
    printf '#!/bin/sh\n# made by %s while it installs packages; removed right after\nexit 101\n' "$bench_name" |
      $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
    made_policy=1
  fi
  { $sudo apt-get update -q && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q "${missing[@]}"; } >&2 ||
    status=$?
  [[ -n "$made_policy" ]] && $sudo rm -f "$policy"
  ((status == 0)) || die "apt-get install ${missing[*]} failed (status $status)"
}

# Sets `binary`: FEEDLAYOUT_BINARY, or this checkout's release build (built first, as run does).
find_feedlayout() {
  if [[ -n "${FEEDLAYOUT_BINARY:-}" ]]; then
    binary="$FEEDLAYOUT_BINARY"
    log "measuring $binary (FEEDLAYOUT_BINARY), not building"
  else
    log "building the release feedlayout"
    binary="$("$root/scripts/build-release")"
  fi
  [[ -x "$binary" ]] || die "no feedlayout binary at $binary"
  # `serve --help` exits 0 even where there is no serve command (the root help is printed): look for its usage line.
  [[ "$("$binary" serve --help 2>/dev/null || true)" == *"USAGE: feedlayout serve"* ]] ||
    die "$binary has no \`serve\` command (build the service first)"
}

# Sets `python`: .bench/venv's (made over Debian's python3 as run makes it) with Pillow, for make-images.py.
bench_python() {
  python="$bench/venv/bin/python"
  if [[ ! -x "$python" ]]; then
    log "making the virtualenv .bench/venv"
    /usr/bin/python3 -m venv --system-site-packages "$bench/venv" >&2
  fi
  if ! "$python" -c "import PIL" 2>/dev/null; then
    log "installing Pillow into .bench/venv"
    "$python" -m pip install -q Pillow >&2
  fi
}

# The whole-pipeline feed of run's pipeline stage: FOLDER/feed.xml with PINS Flickr-style pins over 300 local
# photos, made exactly as run makes it (same folder and marker, so run and this script share it).
pipeline_feed() {
  local pins="$1" folder="$bench/pipeline-$1"
  if [[ ! -e "$folder.done" ]]; then
    log "generating the $pins-pin feed and 300 photos"
    rm -rf "$folder"
    "$python" "$root/Benchmarks/inputs/make-images.py" "$folder/photos" 300 >&2
    "$python" "$root/Benchmarks/inputs/make-pipeline-feed.py" "$folder" "$pins" >&2
    echo done > "$folder.done"
  fi
  pipeline_folder="$folder"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()'
}

# Waits until URL answers with one of the statuses (default 200) or TIMEOUT seconds pass; PID must stay alive.
wait_for_http() {
  local url="$1" pid="$2" timeout="$3" want="${4:-200}" code deadline=$((SECONDS + $3))
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || return 1
    code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 2 "$url" || true)"
    [[ " $want " == *" $code "* ]] && return 0
    sleep 0.2
  done
  return 1
}

# Starts nginx serving WWW on a free 127.0.0.1 port, its configuration, pid file, logs and temp files in DIR.
# Sets nginx_pid and nginx_port. Two workers (as many as the service has cores to use here), keep-alive without a
# request limit (wrk's connections stay open, as they do against the service), no access log, and gzip_static:
# a request that accepts gzip gets the page's precompressed .gz file, so nginx does no compression work at all.
start_nginx() {
  local www="$1" dir="$2" user_line=""
  mkdir -p "$dir/temp"
  nginx_port="$(free_port)"
  # Run as root, nginx's workers would switch to `nobody`, which may not read .bench or the temporary folder.
  [[ "$(id -u)" -eq 0 ]] && user_line="user root;"
  cat > "$dir/nginx.conf" <<EOF
$user_line
worker_processes 2;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_timeout 75s;
  keepalive_requests 100000000;
  types {
    application/json json;
    application/rss+xml xml;
    image/jpeg jpg jpeg;
    image/png png;
  }
  default_type application/octet-stream;
  gzip_static on;
  gzip_vary on;
  client_body_temp_path $dir/temp/client;
  proxy_temp_path $dir/temp/proxy;
  fastcgi_temp_path $dir/temp/fastcgi;
  uwsgi_temp_path $dir/temp/uwsgi;
  scgi_temp_path $dir/temp/scgi;
  server {
    listen 127.0.0.1:$nginx_port;
    root $www;
    # The same caching headers the service sends with a page.
    location /pages/ { add_header Cache-Control "public, max-age=31536000, immutable"; }
  }
}
EOF
  "$(command -v nginx || echo /usr/sbin/nginx)" -p "$dir" -c "$dir/nginx.conf" -e "$dir/error.log" &
  nginx_pid=$!
  started_pids+=("$nginx_pid")
  wait_for_http "http://127.0.0.1:$nginx_port/" "$nginx_pid" 20 "200 403 404" ||
    die "nginx did not start: $(tail -5 "$dir/error.log" 2>/dev/null)"
  log "nginx (pid $nginx_pid) serves $www on 127.0.0.1:$nginx_port"
}

# Starts `feedlayout serve` on a free 127.0.0.1 port with a fresh store in DIR, and waits for /healthz.
# Sets service_pid, service_port, service_url. The service keeps its probe cache in its store, so a fresh store is a
# fresh probe cache; XDG_CACHE_HOME also points at an empty folder of DIR, so no cache of this machine's (the CLI's
# default lives under $XDG_CACHE_HOME/feedlayout) can reach it either. Further arguments go to `serve`.
# STORE=postgres: the service keeps its layouts in a throwaway PostgreSQL cluster (scripts/postgres-cluster) in DIR,
# removed on exit; otherwise in DIR/store.sqlite.
start_service() {
  local dir="$1" store
  shift
  mkdir -p "$dir/cache"
  if [[ "${STORE:-sqlite}" == postgres ]]; then
    install_packages postgresql
    postgres_folder="$dir/postgres"
    store="$("$root/scripts/postgres-cluster" start "$postgres_folder" "$(free_port)")" ||
      die "the PostgreSQL cluster did not start"
  else
    store="$dir/store.sqlite"
  fi
  service_port="$(free_port)"
  service_url="http://127.0.0.1:$service_port"
  XDG_CACHE_HOME="$dir/cache" "$binary" serve --host 127.0.0.1 --port "$service_port" --store "$store" \
    --allow-private-network "$@" > "$dir/service.log" 2>&1 &
  service_pid=$!
  started_pids+=("$service_pid")
  wait_for_http "$service_url/healthz" "$service_pid" 60 ||
    die "feedlayout serve did not become healthy: $(tail -20 "$dir/service.log")"
  log "feedlayout serve (pid $service_pid) on $service_url, store $store"
}

# Stops the service start_service started and, with STORE=postgres, removes its cluster: the next round has the
# machine to itself and its service starts from nothing.
stop_service() {
  stop_process "$service_pid"
  forget_pid "$service_pid"
  if [[ -n "${postgres_folder:-}" ]]; then
    "$root/scripts/postgres-cluster" remove "$postgres_folder" || true
    postgres_folder=""
  fi
}

# Stops one process this script started: TERM, up to 10 s for it to finish, then KILL.
stop_process() {
  local pid="$1" waited
  kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for waited in $(seq 100); do
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null || true
}

# Drops a stopped process from the list, so the exit never signals a PID the system may have given to another.
forget_pid() {
  local kept=() pid
  for pid in "${started_pids[@]}"; do [[ "$pid" == "$1" ]] || kept+=("$pid"); done
  started_pids=("${kept[@]}")
}

# Stops every process started here, newest first (the service before the nginx it reads feeds from).
stop_everything() {
  local index
  for ((index = ${#started_pids[@]} - 1; index >= 0; index--)); do
    stop_process "${started_pids[index]}"
  done
  started_pids=()
  if [[ -n "${postgres_folder:-}" ]]; then
    "$root/scripts/postgres-cluster" remove "$postgres_folder" || true
    postgres_folder=""
  fi
}

# Memory of a running process in KiB: VmRSS (now) or VmHWM (its peak so far).
memory_kib() { awk -v key="$2:" '$1 == key {print $2}' "/proc/$1/status" 2>/dev/null || true; }

# The CPU time (user + system, seconds) a running process has used so far.
cpu_seconds() {
  awk -v tick="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / tick}' "/proc/$1/stat" 2>/dev/null || true
}

# Reads files into the page cache, untimed (see read_into_page_cache in run: this VM evicts page cache not touched
# for a few seconds, so whichever side comes first after a pause would otherwise pay for the disk).
warm_page_cache() { find -L "$@" -type f -print0 2>/dev/null | xargs -0 -r cat > /dev/null; }

machine_line() {
  local model cores load
  model="$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null)"
  cores="$(nproc)"
  load="$(cut -d' ' -f1-3 /proc/loadavg)"
  printf '%s, %s cores, %s GiB RAM; Linux %s; load average %s' "${model:-unknown CPU}" "$cores" \
    "$(awk '/^MemTotal/ {printf "%.0f", $2 / 1048576}' /proc/meminfo)" "$(uname -r)" "$load"
}
