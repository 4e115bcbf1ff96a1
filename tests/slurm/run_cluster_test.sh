#!/usr/bin/env bash
# The SLURM path against a real cluster: a single-node SLURM (munge, MariaDB, slurmdbd,
# slurmctld, slurmd) on 127.0.0.1, started by this script on its own ports, with its sockets
# and state in a temporary folder and its config in /etc/slurm (refused if one is there); then
# tests/slurm/test_cluster.py runs the tiny config through profiles/slurm and locally, and
# compares every table. On exit, also on failure or Ctrl-C, it cancels the cluster's jobs,
# stops the daemons it started, by pid, and deletes its config and folder. Needs root on a
# Debian machine that is not part of a cluster; apt installs the packages when missing.
#
# It runs only when asked, with LENGTHGEN_CLUSTER_TEST=1 (CI, .ci/run, sets it); otherwise it
# says it skipped the test, installs and writes nothing, and exits 0. Asked but unable to run
# (not root, no apt-get), it fails.
#
#   LENGTHGEN_CLUSTER_TEST=1 bash tests/slurm/run_cluster_test.sh   # from anywhere; about 5 minutes on 2 cores
#
# The executor plugin lives only in .venv-slurm (made here with `pip install -e '.[slurm,test]'`):
# it runs `scontrol show config` when snakemake starts, so keeping it out of .venv keeps every
# other snakemake call free of that wait (timed at the end).
set -euo pipefail
case "${LENGTHGEN_CLUSTER_TEST:-}" in
    1) ;;
    "" | 0)
        echo "run_cluster_test.sh: skipped the real-SLURM-cluster test (not asked; to run it, set" \
            "LENGTHGEN_CLUSTER_TEST=1; it needs root on a Debian machine, installs SLURM with apt" \
            "and writes /etc/slurm)"
        exit 0 ;;
    *)
        echo "run_cluster_test.sh: LENGTHGEN_CLUSTER_TEST is '$LENGTHGEN_CLUSTER_TEST'; set it to 1" \
            "to run the real-SLURM-cluster test, or leave it unset (or 0) to skip it" >&2
        exit 2 ;;
esac
cd "$(dirname "$0")/../.."
# Asked (LENGTHGEN_CLUSTER_TEST=1) but unable to run: fail, since the caller wants the test.
if [ "$(id -u)" -ne 0 ]; then
    echo "run_cluster_test.sh: LENGTHGEN_CLUSTER_TEST=1 but not root: the real-SLURM-cluster test" \
        "needs root (it installs packages and starts SLURM daemons); run it as root, or unset" \
        "LENGTHGEN_CLUSTER_TEST to skip it" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "run_cluster_test.sh: LENGTHGEN_CLUSTER_TEST=1 but no apt-get: the real-SLURM-cluster" \
        "test needs a Debian machine (it installs SLURM with apt); unset LENGTHGEN_CLUSTER_TEST" \
        "to skip it" >&2
    exit 1
fi
NODE=$(hostname -s)        # slurmd's node name must be the short host name
# Ports of this test cluster, away from SLURM's defaults (6817-6819) so a real one is untouched.
CTLD_PORT=16817 SLURMD_PORT=16818 DBD_PORT=16819

log() { printf '[cluster-test %s] %s\n' "$(date +%T)" "$*"; }

# Wait at most $1 seconds for the command after it to succeed; fail naming it otherwise.
wait_for() {
    local seconds=$1; shift
    local deadline=$((SECONDS + seconds))
    until "$@" >/dev/null 2>&1; do
        if ((SECONDS >= deadline)); then
            log "gave up after ${seconds}s waiting for: $*"
            return 1
        fi
        sleep 0.5
    done
}

install_packages() {
    local packages=(munge mariadb-server slurmdbd slurmctld slurmd slurm-client)
    local installed
    installed=$(dpkg-query -W -f='${Status}\n' "${packages[@]}" 2>/dev/null | grep -c "install ok installed" || true)
    if [ "$installed" -ne ${#packages[@]} ]; then
        log "installing ${packages[*]} with apt"
        export DEBIAN_FRONTEND=noninteractive
        timeout 600 apt-get update -q >/dev/null
        # The packages try to start their services; with no systemd that is refused, harmlessly.
        timeout 900 apt-get install -y -q --no-install-recommends "${packages[@]}" >/dev/null
    fi
}

make_venv() {
    if ! .venv-slurm/bin/python -c "import snakemake_executor_plugin_slurm, pytest" 2>/dev/null; then
        log "making .venv-slurm (pip install -e '.[slurm,test]')"
        python3 -m venv .venv-slurm
        timeout 900 .venv-slurm/bin/pip install -q -e '.[slurm,test]' >.venv-slurm/pip.log 2>&1 \
            || { tail -n 50 .venv-slurm/pip.log; return 1; }
    fi
}

# --- the daemons -------------------------------------------------------------------------
PIDS=()      # daemons this script started, in start order
NAMES=()
start() {    # start NAME COMMAND...: run a daemon in the foreground, in the background
    local name=$1; shift
    "$@" >>"$WORK/log/$name.out" 2>&1 &
    PIDS+=($!)
    NAMES+=("$name")
    log "started $name (pid $!)"
}

stop_all() {
    local status=$?
    set +e
    if ((${#PIDS[@]})); then
        # Jobs first, while the controller is up: their processes belong to this cluster.
        if timeout 10 scontrol ping >/dev/null 2>&1; then
            timeout 10 scancel --full --quiet --user=root 2>/dev/null
            # shellcheck disable=SC2016  # expanded by the inner bash, at every try
            wait_for 60 bash -c '[ -z "$(timeout 10 squeue --noheader --format=%i)" ]'
        fi
        local i pid
        for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
            pid=${PIDS[i]}
            kill -TERM "$pid" 2>/dev/null || continue
            wait_for 30 bash -c "! kill -0 $pid" || kill -KILL "$pid" 2>/dev/null
            wait "$pid" 2>/dev/null
            log "stopped ${NAMES[i]} (pid $pid)"
        done
    fi
    if ((status != 0)) && [ -n "${WORK:-}" ] && [ -d "$WORK/log" ]; then
        for file in "$WORK"/log/*; do
            log "--- last lines of $file"
            tail -n 20 "$file"
        done
    fi
    [ -n "${WROTE_CONFIG:-}" ] && rm -f "$CONF_DIR/slurm.conf" "$CONF_DIR/slurmdbd.conf"
    [ -n "${WORK:-}" ] && rm -rf "$WORK"
    exit "$status"
}

install_packages
make_venv

CONF_DIR=/etc/slurm
if [ -e "$CONF_DIR/slurm.conf" ] || [ -e "$CONF_DIR/slurmdbd.conf" ]; then
    echo "run_cluster_test.sh: $CONF_DIR already has a SLURM config; this test writes its own" \
        "there, so run it on a machine that is not part of a cluster" >&2
    exit 1
fi
WROTE_CONFIG=
WORK=$(mktemp -d /tmp/lengthgen-slurm.XXXXXX)
trap stop_all EXIT
trap 'exit 130' INT TERM
chmod 755 "$WORK"    # munge and mysql need to reach their folders below it
mkdir -p "$WORK"/{log,run,state,spool,runs} "$WORK"/munge "$WORK"/mysql/data
chown munge:munge "$WORK/munge"
chmod 755 "$WORK/munge"   # munged wants its socket folder reachable by all
chown -R mysql:mysql "$WORK/mysql"

log "munge"
dd if=/dev/urandom of="$WORK/munge/munge.key" bs=1024 count=1 status=none
chown munge:munge "$WORK/munge/munge.key"
chmod 400 "$WORK/munge/munge.key"
MUNGE_SOCKET=$WORK/munge/munge.socket
start munged setpriv --reuid=munge --regid=munge --init-groups /usr/sbin/munged --foreground \
    --key-file="$WORK/munge/munge.key" --socket="$MUNGE_SOCKET" \
    --pid-file="$WORK/munge/munged.pid" --seed-file="$WORK/munge/munged.seed" \
    --log-file="$WORK/munge/munged.log"
wait_for 20 munge --socket="$MUNGE_SOCKET" --string=ok

log "mariadb (socket only)"
MYSQL_SOCKET=$WORK/mysql/mysqld.sock
timeout 120 mariadb-install-db --no-defaults --user=mysql --datadir="$WORK/mysql/data" \
    --auth-root-authentication-method=socket --skip-test-db >"$WORK/log/mariadb-install.out" 2>&1
start mariadbd /usr/sbin/mariadbd --no-defaults --user=mysql --datadir="$WORK/mysql/data" \
    --socket="$MYSQL_SOCKET" --pid-file="$WORK/mysql/mariadbd.pid" --skip-networking \
    --log-error="$WORK/log/mariadbd.log"
wait_for 60 mariadb --no-defaults --socket="$MYSQL_SOCKET" -e "select 1"

log "slurm config in $CONF_DIR"
# Jobs run `srun`, which the executor starts with the SLURM_* variables removed (SLURM_CONF
# too), so the config goes where every SLURM command looks first; removed again on exit.
WROTE_CONFIG=1
cat >"$CONF_DIR/slurm.conf" <<EOF
# A one-node test cluster; see tests/slurm/run_cluster_test.sh.
ClusterName=lengthgen
SlurmctldHost=$NODE(127.0.0.1)
SlurmctldPort=$CTLD_PORT
SlurmdPort=$SLURMD_PORT
SlurmUser=root
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
CredType=cred/munge
StateSaveLocation=$WORK/state
SlurmdSpoolDir=$WORK/spool
SlurmctldPidFile=$WORK/run/slurmctld.pid
SlurmdPidFile=$WORK/run/slurmd.pid
SlurmctldLogFile=$WORK/log/slurmctld.log
SlurmdLogFile=$WORK/log/slurmd.log
# No cgroups here: track job processes by parent pid, bind no tasks.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU_Memory
# The node advertises more CPUs and memory than it has (a group job asks for the sum of its
# members'); the jobs are small, and nothing here enforces the limits.
SlurmdParameters=config_overrides
# A request the cluster can never satisfy is refused at submission instead of pending forever.
EnforcePartLimits=ALL
# A job that names no memory gets this much per CPU, not the whole node.
DefMemPerCPU=1000
ReturnToService=2
InactiveLimit=0
KillWait=5
# The executor polls job states with sacct, which needs the accounting daemon.
AccountingStorageType=accounting_storage/slurmdbd
AccountingStorageHost=127.0.0.1
AccountingStoragePort=$DBD_PORT
# For slurmdbd connections MUNGE is reached through this socket (SLURM reuses the "Pass" key).
AccountingStoragePass=$MUNGE_SOCKET
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
NodeName=$NODE NodeAddr=127.0.0.1 CPUs=16 RealMemory=64000 State=UNKNOWN
PartitionName=main Nodes=$NODE Default=YES MaxTime=INFINITE State=UP
EOF
# slurmdbd reads slurmdbd.conf beside slurm.conf; it holds the database login, so 600.
install -m 600 /dev/stdin "$CONF_DIR/slurmdbd.conf" <<EOF
AuthType=auth/munge
AuthInfo=socket=$MUNGE_SOCKET
DbdHost=localhost
DbdAddr=127.0.0.1
DbdPort=$DBD_PORT
SlurmUser=root
StorageType=accounting_storage/mysql
StorageHost=localhost
StorageUser=root
StorageLoc=slurm_acct_db
LogFile=$WORK/log/slurmdbd.log
PidFile=$WORK/run/slurmdbd.pid
EOF

log "slurmdbd, slurmctld, slurmd"
# MariaDB's client library finds the server's socket through this variable.
MYSQL_UNIX_PORT=$MYSQL_SOCKET start slurmdbd /usr/sbin/slurmdbd -D
wait_for 60 timeout 10 sacctmgr --noheader show cluster
timeout 30 sacctmgr --immediate add cluster lengthgen >/dev/null
start slurmctld /usr/sbin/slurmctld -D -i
wait_for 60 timeout 10 scontrol ping
start slurmd /usr/sbin/slurmd -D -N "$NODE"
wait_for 60 bash -c "timeout 10 sinfo --noheader --nodes=$NODE --format=%T | grep -qx idle"
log "cluster up: $(sinfo --noheader --format='%P %D %c %m %T')"

log "pytest tests/slurm (cluster and local run of tests/smoke_config.yaml)"
# Bounded inside too: each snakemake call runs under `timeout -s INT` (it ignores SIGTERM while
# jobs run), and their limits add up to less than this one.
CLUSTER_TEST_DIR=$WORK/runs timeout -s INT -k 60 1800 \
    .venv-slurm/bin/python -m pytest -m cluster tests/slurm -p no:cacheprovider -s -q

# The plugin's import-time `scontrol show config` waits for a controller; stop this one, keep
# its config (as a cluster's login node has one), and time a dry run with the plugin
# (.venv-slurm) and without it (.venv).
log "stopping the controller to time snakemake start-up with no controller answering"
for ((i = ${#PIDS[@]} - 1; i >= 0; i--)); do
    if [ "${NAMES[i]}" = slurmctld ]; then
        kill -TERM "${PIDS[i]}"
        wait_for 30 bash -c "! kill -0 ${PIDS[i]}"
    fi
done
for venv in .venv-slurm .venv; do
    if [ -x "$venv/bin/snakemake" ]; then
        begin=$(date +%s%N)
        timeout 120 "$venv/bin/snakemake" -n --quiet all --configfile tests/smoke_config.yaml \
            --directory "$WORK/runs/dry" >/dev/null 2>&1
        elapsed_ms=$((($(date +%s%N) - begin) / 1000000))
        log "snakemake -n in $venv took $((elapsed_ms / 1000)).$((elapsed_ms % 1000 / 100)) s (controller down)"
    fi
done
log "passed"
