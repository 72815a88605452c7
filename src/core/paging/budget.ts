/** A page, a section or a grep result holds at most this many bytes of text. */
export const PAGE_MAX_BYTES = 50 * 1024;

/** The model's tokenizer and its budget for one result, when the host knows them. */
export interface TokenBudget {
  readonly budget: number;
  count(text: string): Promise<number>;
}

/** How much of a result reaches the model in one piece; the rest goes to a result artifact. */
export interface PageBudget {
  /** UTF-8 bytes of text at most, header included. */
  readonly bytes: number;
  readonly tokens?: TokenBudget;
}

/** One page: 50 KiB, the same as an artifact_read page. */
export const DEFAULT_PAGE: PageBudget = { bytes: PAGE_MAX_BYTES };

/** Whether `text` fits the budget. Tokens are counted only when the bytes alone do not settle it. */
export async function fits(text: string, budget: PageBudget): Promise<boolean> {
  const bytes = Buffer.byteLength(text);
  if (bytes > budget.bytes) return false;
  // No tokenizer makes more tokens than bytes (byte-level BPE at worst), so this needs no count.
  if (!budget.tokens || bytes <= budget.tokens.budget) return true;
  return (await budget.tokens.count(text)) <= budget.tokens.budget;
}

/**
 * The largest `k` (at most `max`) for which `textOf(k)` fits the budget, where `textOf(k)` is the
 * page with its first `k` items and grows with `k` (from `k` = 1 on). `bytesOf(k)` gives its size
 * cheaply. Security: sizes are bisected, so a page chosen from n items costs O(log n) sizes and
 * O(n) text, never a step per item (which froze the host on a 100,000-line grep).
 */
export async function largestFitting(
  max: number,
  bytesOf: (k: number) => number,
  textOf: (k: number) => string,
  budget: PageBudget,
): Promise<number> {
  let k = 0;
  for (let hi = max; k < hi;) {
    const mid = Math.ceil((k + hi) / 2);
    if (bytesOf(mid) <= budget.bytes) k = mid;
    else hi = mid - 1;
  }
  const tokens = budget.tokens;
  if (!tokens) return k;
  // Each count is a call into the model's tokenizer: shrink in proportion, then step down by halves.
  for (let tries = 0; k > 0 && bytesOf(k) > tokens.budget; tries++) {
    const counted = await tokens.count(textOf(k));
    if (counted <= tokens.budget) return k;
    k = tries < 3 ? Math.min(k - 1, Math.floor((k * tokens.budget * 0.9) / counted)) : Math.floor(k / 2);
  }
  return Math.max(k, 0);
}
