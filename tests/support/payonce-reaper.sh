#!/bin/sh
# payonce-reaper: cleans up after a test process that could not clean up itself.
#
# payonce_testsupport starts one reaper per scratch folder, detached in its own session,
# with stdio on /dev/null. It waits while the test process lives and the folder exists.
# - The folder went first: the test cleaned up normally, nothing to do, exit.
# - The test went first (SIGKILL, ctest timeout, crash): stop every server whose pid file
#   or command line points into the folder, then remove the folder.
# Inputs come through the environment, not argv, so that `pgrep -f <folder>` below finds
# the servers and never this script:
#   PAYONCE_REAPER_WATCH   pid of the test process
#   PAYONCE_REAPER_FOLDER  the scratch folder
# Only processes whose name is a server we start are signalled, so a stale pid file whose
# pid was reused by someone else harms nobody.

watch=$PAYONCE_REAPER_WATCH
folder=$PAYONCE_REAPER_FOLDER
[ -n "$watch" ] && [ -n "$folder" ] || exit 2

# Fields of /proc/<pid>/stat after "(comm) ", read with shell builtins only: $1 is the
# state, $20 the start time (guards against the watched pid being reused).
stat_fields() {
    line=
    read -r line < "/proc/$1/stat" 2>/dev/null || return 1
    rest=${line##*) }
}
alive() { # a zombie leader counts while other threads of it are still exiting
    stat_fields "$1" || return 1
    task=/proc/$1/task
    set -- $rest
    [ "$1" != Z ] && [ "$1" != X ] && return 0
    set -- "$task"/*
    [ "$#" -gt 1 ]
}
start_time() {
    stat_fields "$1" || return 1
    set -- $rest
    shift 19
    echo "$1"
}

birth=$(start_time "$watch") || exit 0
while alive "$watch" && [ "$(start_time "$watch")" = "$birth" ]; do
    [ -d "$folder" ] || exit 0
    sleep 1
done
[ -d "$folder" ] || exit 0

is_server() {
    comm=
    read -r comm < "/proc/$1/comm" 2>/dev/null || return 1
    case $comm in
        redis-server|postgres|postmaster|mariadbd|mysqld) return 0 ;;
    esac
    return 1
}
wait_gone() { # pid tenths-of-a-second
    n=0
    while alive "$1"; do
        [ "$n" -ge "$2" ] && return 1
        sleep 0.1
        n=$((n + 1))
    done
}
first_line() {
    p=
    read -r p < "$1" 2>/dev/null
    case $p in ''|*[!0-9]*) return 1 ;; esac
    echo "$p"
}

# PostgreSQL first, with an immediate shutdown: the postmaster takes its backends and
# shared memory with it, which SIGKILL would leave behind.
for f in $(find "$folder" -maxdepth 3 -name postmaster.pid 2>/dev/null); do
    p=$(first_line "$f") || continue
    is_server "$p" || continue
    kill -QUIT "$p" 2>/dev/null
    wait_gone "$p" 100 || kill -KILL "$p" 2>/dev/null
done

# The rest gets no goodbye: their data is about to be deleted anyway. pgrep catches a
# server that was killed between its start and writing its pid file.
victims=
for f in $(find "$folder" -maxdepth 3 -name '*.pid' ! -name postmaster.pid 2>/dev/null); do
    p=$(first_line "$f") && victims="$victims $p"
done
victims="$victims $(pgrep -f -- "$folder" 2>/dev/null)"
for p in $victims; do
    [ "$p" = "$$" ] && continue
    is_server "$p" || continue
    kill -KILL "$p" 2>/dev/null
done
for p in $victims; do
    [ "$p" = "$$" ] && continue
    wait_gone "$p" 50
done

rm -rf -- "$folder"
