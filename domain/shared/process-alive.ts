/**
 * Whether process `pid` (a positive integer) still runs on this machine; one of another user's counts (signalling
 * it is refused).
 */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
