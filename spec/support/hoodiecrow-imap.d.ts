/** The dev dependency hoodiecrow-imap ships no types: what the e-mail specs use of it (its README). */
declare module 'hoodiecrow-imap' {
  import type { Server } from 'node:net';
  interface Mailbox {
    uidvalidity: number;
  }
  interface HoodiecrowServer {
    /** The listening socket. */
    server: Server;
    listen(port: number, host: string, callback: () => void): void;
    close(callback?: () => void): void;
    getMailbox(path: string): Mailbox | undefined;
  }
  interface Options {
    plugins?: string[];
    users?: Record<string, { password: string }>;
    storage?: Record<string, unknown>;
  }
  export default function hoodiecrow(options?: Options): HoodiecrowServer;
}
