// istextorbinary publishes its types only under the "node"/"browser" export conditions, which
// TypeScript's "Bundler" resolution does not use; this declares the one function the core calls.
declare module 'istextorbinary' {
  /** By the file name's extension when known, else by sampling the buffer; null when given neither. */
  export function isBinary(filename?: string | null, buffer?: Buffer | null): boolean | null;
}
