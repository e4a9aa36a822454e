/**
 * The shutdown rule the runner and the heartbeat share: wait for `work` (what is under way)
 * for up to `graceMs`; if it is not done by then, call `late` (which aborts what may still be
 * aborted — deliveries) and wait for it to settle.
 */
export async function stopWithGrace(work: Promise<unknown>, graceMs: number, late: () => void): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const grace = new Promise<'late'>((resolve) => {
    timer = setTimeout(resolve, graceMs, 'late');
  });
  const outcome = await Promise.race([work.then(() => 'done' as const), grace]);
  clearTimeout(timer);
  if (outcome === 'late') {
    late();
    await work;
  }
}
