// The memory of a server process, as the kernel counts it: a test that
// attacks a spawned server asserts a bound on what the attack made it hold.
import { readFileSync } from 'node:fs';

function statusField(pid: number, field: 'VmRSS' | 'VmHWM'): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (!match) throw new Error(`no ${field} in /proc/${pid}/status`);
  return Number(match[1]) / 1024;
}

/** Resident memory now, in MiB. */
export const rssMiB = (pid: number): number => statusField(pid, 'VmRSS');

/** The most resident memory the process has ever had, in MiB. */
export const peakRssMiB = (pid: number): number => statusField(pid, 'VmHWM');
