/**
 * ASCII path segments ("**\/.ssh/**" needs ".ssh"), looked up in any case in the segments of a
 * "/"-separated path. Called for every search result, so a segment is lower-cased and looked up
 * only when its length and first character could match: most paths cost a few `indexOf`s and no
 * allocation.
 */
export class SegmentSet {
  private readonly segments: ReadonlySet<string>;
  private readonly lengths: ReadonlySet<number>;
  /** The segments' first characters, in both cases (char codes). */
  private readonly firsts: ReadonlySet<number>;

  /** `segments`: printable ASCII, any case. */
  constructor(segments: Iterable<string>) {
    const lower = [...segments].map((s) => s.toLowerCase());
    this.segments = new Set(lower);
    this.lengths = new Set(lower.map((s) => s.length));
    this.firsts = new Set(lower.flatMap((s) => [s.charCodeAt(0), s.toUpperCase().charCodeAt(0)]));
  }

  /**
   * Whether one of `path`'s segments is one of the set, case-insensitively. Security: never false for
   * a path a segment matches as the host's case-insensitive RegExp would (it pairs an ASCII letter
   * only with its other case, so such a segment has the same length and a first character in
   * `firsts`); it may be true for a few more (a non-ASCII character that lower-cases to ASCII).
   */
  inPath(path: string): boolean {
    if (this.segments.size === 0) return false;
    let start = 0;
    for (;;) {
      const slash = path.indexOf('/', start);
      const end = slash === -1 ? path.length : slash;
      if (
        this.lengths.has(end - start) &&
        this.firsts.has(path.charCodeAt(start)) &&
        this.segments.has(path.slice(start, end).toLowerCase())
      )
        return true;
      if (slash === -1) return false;
      start = slash + 1;
    }
  }
}
