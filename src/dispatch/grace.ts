/** Waits for `work` up to `graceMs`, then calls `late` (abort what may be aborted) and waits for it to settle. */
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
