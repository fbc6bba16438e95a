// CPU time of processes on this machine, read from /proc (Linux): the bench's processes and its PostgreSQL.
'use strict';
const fs = require('node:fs');

/** Clock ticks to ms (Linux's USER_HZ, 100). */
const TICK_MS = 1000 / 100;

/**
 * A process's command name and the fields of /proc/<pid>/stat after it (field 3, the state, is [0]; the parent's pid
 * [1]; utime, stime, cutime, cstime [11]–[14]); undefined when the process is gone or /proc is not there.
 * @param {number | string} pid
 * @returns {{ comm: string, fields: string[] } | undefined}
 */
function statOf(pid) {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    const end = stat.lastIndexOf(') ');
    return { comm: stat.slice(stat.indexOf('(') + 1, end), fields: stat.slice(end + 2).split(' ') };
  } catch {
    return undefined;
  }
}

/**
 * CPU time (ms, user + system) a process has spent so far; 0 when it is gone.
 * @param {number} pid
 */
function processCpuMs(pid) {
  const stat = statOf(pid);
  return stat ? (Number(stat.fields[11]) + Number(stat.fields[12])) * TICK_MS : 0;
}

/**
 * The PostgreSQL server process whose backend `backendPid` is, when that backend runs on this machine (readable here,
 * its command PostgreSQL's); undefined otherwise.
 * @param {number} backendPid
 * @returns {number | undefined}
 */
function postmasterOf(backendPid) {
  const backend = statOf(backendPid);
  return backend?.comm === 'postgres' ? Number(backend.fields[1]) : undefined;
}

/**
 * CPU time (ms) a PostgreSQL server has spent so far: its server process, with the time of the children it reaped
 * (backends and autovacuum workers that ended), and every child still running (backends, background processes).
 * NaN when that process is gone.
 * @param {number} postmasterPid
 */
function postgresCpuMs(postmasterPid) {
  const own = statOf(postmasterPid);
  if (!own) return NaN;
  let ticks = Number(own.fields[11]) + Number(own.fields[12]) + Number(own.fields[13]) + Number(own.fields[14]);
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^[0-9]+$/.test(entry)) continue;
    const child = statOf(entry);
    if (child && Number(child.fields[1]) === postmasterPid) ticks += Number(child.fields[11]) + Number(child.fields[12]);
  }
  return ticks * TICK_MS;
}

module.exports = { processCpuMs, postmasterOf, postgresCpuMs };
