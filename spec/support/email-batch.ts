/**
 * A batch as `hookrelay email run` posts it to the e-mail preset (CONTRACT.md §7): `n` mails
 * with their uid, Message-ID, thread and a body of about a kilobyte, so that 200 of them stay
 * under the default hooks.maxBodyBytes (256 KiB). `tag` makes the uids and ids of one batch
 * its own, so that each batch is acted on rather than replayed.
 */
export function emailBatch(n: number, tag: string): { source: string; messages: Record<string, string>[] } {
  const messages = [];
  for (let i = 0; i < n; i++) {
    messages.push({
      id: `${tag}-${i}@mail.example`,
      uid: `${tag}:${i}`,
      threadId: `${tag}-thread-${i % 20}@mail.example`,
      from: `Sender ${i} <s${i}@mail.example>`,
      subject: `Subject ${i} of ${tag}`,
      snippet: `Hello, this is mail ${i}`,
      body: `Hello, this is mail ${i}.\n${'Some body text. '.repeat(60)}`,
    });
  }
  return { source: 'email', messages };
}
