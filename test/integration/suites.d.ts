/** The suite list test/build-tests.mjs generates: every `*.test.ts` under test/integration/. */
declare module 'wt:integration-suites' {
  /** One bundled suite file; `load()` runs its top-level `describe` calls. */
  const suites: { file: string; load(): unknown }[];
  export default suites;
}
