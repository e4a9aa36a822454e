/** Adds `value` to the list under `key`, in place: one pass builds a table of lists, where copying each list on every add would be quadratic. */
export function append<K, T>(lists: Map<K, T[]>, key: K, value: T): void {
  const list = lists.get(key);
  if (list === undefined) lists.set(key, [value]);
  else list.push(value);
}
