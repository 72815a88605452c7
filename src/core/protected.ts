// The protected list lives in policy/protected.ts; this path stays for the modules that import it here.
export { PROTECTED_FAMILIES, PROTECTED_GLOBS } from './policy/protected.ts';
