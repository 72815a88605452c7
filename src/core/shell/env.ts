/**
 * Security: names of environment variables that hold credentials. The command gets none of them:
 * what it prints goes to the language model, and `env` is one word away.
 */
const CREDENTIAL_NAME =
  /(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|_KEY$|^KEY$|CREDENTIAL|AUTH|COOKIE|SESSION|^AWS_|^AZURE_|^GOOGLE_APPLICATION|^GCLOUD_|^GH_|^GITHUB_|^GITLAB_|^NPM_|^NODE_AUTH|^DOCKER_|^VAULT_|^OPENAI_|^ANTHROPIC_|^HF_|^SSH_AUTH_SOCK$|^GPG_AGENT)/i;

/** Whether an environment variable's name says it holds a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name) || /(^|_)(PASS|PWD|DSN|WEBHOOK(_URL)?)$/i.test(name);
}

/**
 * Security: values that hold a credential whatever the variable is called: a URL with a password
 * (`postgres://u:pass@host`), a DSN or webhook with its key in it, a well-known token prefix.
 */
const CREDENTIAL_VALUE = [
  /[a-z][a-z0-9+.-]*:\/\/[^/\s:@]*:[^/\s@]+@/i,
  /https?:\/\/[0-9a-f]{16,}@[^/\s]+/i,
  /hooks\.slack\.com\/services\/|discord(app)?\.com\/api\/webhooks\//i,
  /\b(ghp|gho|ghu|ghs|ghr|github_pat|glpat|xox[abposr]|sk|sk-ant|hf|npm|AKIA|ASIA)[-_][A-Za-z0-9_-]{12,}/,
  /\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\./,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----/,
];

/** Whether a value holds a credential (see `CREDENTIAL_VALUE`). */
export function isCredentialValue(value: string): boolean {
  return CREDENTIAL_VALUE.some((pattern) => pattern.test(value));
}

/**
 * What a command gets on top of the environment: update checks and telemetry that phone home are
 * off by each tool's documented switch, so an offline `npm test` asks for no host.
 */
export const QUIET_TOOLS: Readonly<Record<string, string>> = {
  NO_UPDATE_NOTIFIER: '1',
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  DO_NOT_TRACK: '1',
  NEXT_TELEMETRY_DISABLED: '1',
  NUXT_TELEMETRY_DISABLED: '1',
  ASTRO_TELEMETRY_DISABLED: '1',
  GATSBY_TELEMETRY_DISABLED: '1',
  TURBO_TELEMETRY_DISABLED: '1',
  YARN_ENABLE_TELEMETRY: '0',
  DOTNET_CLI_TELEMETRY_OPTOUT: '1',
  DOTNET_NOLOGO: '1',
  HOMEBREW_NO_ANALYTICS: '1',
  PIP_DISABLE_PIP_VERSION_CHECK: '1',
  CHECKPOINT_DISABLE: '1',
  SAM_CLI_TELEMETRY: '0',
  AZURE_CORE_COLLECT_TELEMETRY: '0',
  GOTOOLCHAIN: 'local',
};

/** The environment without credential variables (and without VS Code's own IPC handles). */
export function scrubEnvironment(env: Readonly<Record<string, string | undefined>>): {
  readonly env: Record<string, string>;
  readonly removed: readonly string[];
} {
  const kept: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    // VS Code's IPC handles would let a command drive the editor (and its unsandboxed terminal) from inside.
    if (
      isCredentialName(name) ||
      isCredentialValue(value) ||
      /^VSCODE_(IPC|GIT_IPC|GIT_ASKPASS)|^ELECTRON_RUN_AS_NODE$/.test(name)
    )
      removed.push(name);
    else kept[name] = value;
  }
  return { env: kept, removed: removed.sort() };
}
