/** "1 line", "3 lines"; `many` for words that do not just take an "s". */
export function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** "812 bytes", "4.2 KiB", "1.00 GiB". */
export function formatBytes(n: number): string {
  if (n < 1024) return plural(n, 'byte');
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(2)} GiB`;
}
