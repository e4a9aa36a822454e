import { BlockList, isIP } from 'node:net';

/** The address rules the config loader and the listener both apply (STYLE.md #14). */

export function trustedBy(trustedProxies: readonly string[]): (address: string) => boolean {
  if (trustedProxies.length === 0) return () => false;
  const trusted = new BlockList();
  for (const entry of trustedProxies) addTrusted(trusted, entry);
  return (a) => isIP(a) !== 0 && trusted.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4');
}

/** The loader checks entries with it too, so that what loads is what the listener accepts. */
export function addTrusted(list: BlockList, entry: string): void {
  const [addr, bits, extra] = entry.split('/');
  const a = fold(addr!);
  const version = isIP(a);
  const family = version === 6 ? 'ipv6' : 'ipv4';
  const max = version === 6 ? 128 : 32;
  if (version === 0 || extra !== undefined || (bits !== undefined && !(/^\d+$/.test(bits) && Number(bits) <= max))) {
    throw new Error(`"${entry}" is not an IP address or CIDR range`);
  }
  if (bits !== undefined) list.addSubnet(a, Number(bits), family);
  else list.addAddress(a, family);
}

/** `::ffff:1.2.3.4` → `1.2.3.4`; anything else unchanged. */
export function fold(address: string): string {
  return address.startsWith('::ffff:') && address.includes('.') ? address.slice(7) : address;
}
