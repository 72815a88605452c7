/**
 * Security: names of environment variables that hold credentials. The command gets none of them:
 * what it prints goes to the language model, and `env` is one word away.
 */
const CREDENTIAL_NAME = /(TOKEN|SECRET|PASSW(OR)?D|PASSPHRASE|API_?KEY|PRIVATE_?KEY|ACCESS_?KEY|_KEY$|^KEY$|CREDENTIAL|AUTH|COOKIE|SESSION|^AWS_|^AZURE_|^GOOGLE_APPLICATION|^GCLOUD_|^GH_|^GITHUB_|^GITLAB_|^NPM_|^NODE_AUTH|^DOCKER_|^VAULT_|^OPENAI_|^ANTHROPIC_|^HF_|^SSH_AUTH_SOCK$|^GPG_AGENT)/i;

/** Whether an environment variable's name says it holds a credential. */
export function isCredentialName(name: string): boolean {
  return CREDENTIAL_NAME.test(name);
}

/** The environment without credential variables (and without VS Code's own IPC handles). */
export function scrubEnvironment(env: Readonly<Record<string, string | undefined>>): { readonly env: Record<string, string>; readonly removed: readonly string[] } {
  const kept: Record<string, string> = {};
  const removed: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    // VS Code's IPC handles would let a command drive the editor (and its unsandboxed terminal) from inside.
    if (isCredentialName(name) || /^VSCODE_(IPC|GIT_IPC|GIT_ASKPASS)|^ELECTRON_RUN_AS_NODE$/.test(name)) removed.push(name);
    else kept[name] = value;
  }
  return { env: kept, removed: removed.sort() };
}
