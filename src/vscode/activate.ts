import * as vscode from 'vscode';
import { promises as fsp, realpathSync } from 'node:fs';
import * as os from 'node:os';
import * as nodePath from 'node:path';
import { NodeFs } from '../core/fs/node-fs.ts';
import { privateRunFolder } from '../core/run-folders.ts';
import type { Session } from '../core/pipeline/session.ts';
import { assemble } from '../core/pipeline/assemble.ts';
import { VSCODE_VOCABULARY } from '../core/vocabulary.ts';
import type { WorkspaceFs } from '../core/ports.ts';
import { locateRipgrep } from '../core/ripgrep/binary.ts';
import { createRipgrep } from '../core/ripgrep/process.ts';
import { createRipgrepSearch } from '../core/search/ripgrep.ts';
import { AuditLog } from './audit-log.ts';
import { VscodeGate, modalDecider, type Decider } from './gate.ts';
import { LanguageModelToolRegistrations, type AskBeforeWriting, type ToolHostHooks } from './lm-tools.ts';
import { askToSave } from './staged/save-review.ts';
import { TOOLS } from '../core/tools/index.ts';
import { readSettings, SECTION, type Settings } from './settings.ts';
import { scriptedDeciderFromEnvironment, type ScriptedDecider } from './test-hooks.ts';
import { allFoldersLocal, workspaceRoots } from './uri.ts';
import { VscodeWorkspaceFs } from './vscode-fs.ts';
import { registerCommands } from './commands.ts';
import { registerStagedReview, saveConfirmationExtras } from './staged/review.ts';
import { withNewDiagnostics } from './staged/diagnostics.ts';
import { vscodeProblems } from './problems.ts';
import { vscodeOutline } from './outline.ts';
import { scopeWriteRoots } from '../core/media/write-roots.ts';
import { workspaceStateDir } from '../core/state-dir.ts';
import type { WorkspaceRoot } from '../core/paths.ts';
import { gateStatusLine, registerGateStatus, type GateStatusInput } from './gate-status.ts';
import { registerMcpSetup } from './mcp-setup.ts';
import { openEditors } from './editors.ts';
import { fileEncodingOf } from './file-encoding.ts';
import { srtSandbox } from '../core/shell/srt-sandbox.ts';
import type { Host, TestApi } from './host.ts';
import type { SessionHosts } from '../core/shell/hosts.ts';
import type { SandboxAvailability } from '../core/shell/port.ts';

/** The extension's storage when it is on the local disk; else a private folder of this process in the temp folder (`temporary`: removed at the end). */
async function spoolFolder(
  context: vscode.ExtensionContext,
): Promise<{ readonly dir: string; readonly temporary: boolean }> {
  const base = context.storageUri ?? context.globalStorageUri;
  if (base.scheme === 'file') return { dir: nodePath.join(base.fsPath, 'artifacts'), temporary: false };
  return { dir: await privateRunFolder(os.tmpdir(), 'workspace-tools-vscode-'), temporary: true };
}

/**
 * The workspace's state folder: on the local disk the one every host opened on these folders shares
 * (so VS Code finishes a set a killed CLI left, and the other way round); else the extension's
 * storage for this workspace; none when there is neither (sets are journaled in the spool).
 */
function stateFolder(
  context: vscode.ExtensionContext,
  local: boolean,
  roots: readonly WorkspaceRoot[],
): string | undefined {
  // Keyed by the folders' real paths, as the CLI's --root are, so both find one state folder.
  const real = (path: string): string => {
    try {
      return realpathSync(path);
    } catch {
      return path;
    }
  };
  if (local && roots.length > 0)
    return workspaceStateDir(
      {
        home: os.homedir(),
        xdgStateHome: process.env.XDG_STATE_HOME,
        localAppData: process.env.LOCALAPPDATA,
        platform: process.platform,
      },
      roots.map((r) => real(r.localPath ?? r.address)),
    );
  return context.storageUri?.scheme === 'file' ? nodePath.join(context.storageUri.fsPath, 'state') : undefined;
}

function createFs(local: boolean, log: AuditLog): WorkspaceFs {
  if (local) return new NodeFs({}, { warn: (message) => log.warn(message) });
  const first = vscode.workspace.workspaceFolders?.[0];
  const writable = first ? vscode.workspace.fs.isWritableFileSystem(first.uri.scheme) !== false : false;
  return new VscodeWorkspaceFs(writable);
}

/** Wires the VS Code adapters to the core; returns the cleanup to run on deactivate. */
export async function activateWorkspaceTools(
  context: vscode.ExtensionContext,
): Promise<{ dispose: () => Promise<void>; exports: TestApi | undefined }> {
  const log = new AuditLog();
  context.subscriptions.push(log);

  const folders = vscode.workspace.workspaceFolders ?? [];
  const local = allFoldersLocal(folders);
  let roots = workspaceRoots(folders, local);
  let settings = readSettings();
  const scopedWriteRoots = (current: Settings) =>
    scopeWriteRoots(current.writeRoots.user, current.writeRoots.workspace, roots);
  const settingErrors = (current: Settings): string[] => {
    const errors: string[] = [];
    if (current.ruleErrors.length)
      errors.push(
        `workspaceTools.rules is invalid, so every call asks for confirmation until it is fixed: ${current.ruleErrors.join(' ')}`,
      );
    errors.push(...current.rules.ignored, ...current.reviewIgnored);
    const writeRoots = scopedWriteRoots(current);
    errors.push(...writeRoots.errors, ...writeRoots.ignored, ...current.shell.problems);
    return errors;
  };
  /** Each distinct problem is reported once, in a notification and the audit log. */
  const reported = new Set<string>();
  const reportSettingErrors = (current: Settings): void => {
    for (const text of settingErrors(current)) {
      if (reported.has(text)) continue;
      reported.add(text);
      log.warn(text);
      void vscode.window.showWarningMessage(text, 'Open Settings').then((choice) => {
        if (choice) void vscode.commands.executeCommand('workbench.action.openSettings', SECTION);
      });
    }
  };
  reportSettingErrors(settings);

  const fs = createFs(local, log);
  const rg = locateRipgrep({ startDir: context.extensionPath, vscodeAppRoot: vscode.env.appRoot });
  if (!rg)
    log.warn(
      "ripgrep was not found (neither @vscode/ripgrep nor VS Code's own copy nor PATH): search_files, find_files and artifact_grep are not registered.",
    );
  else log.info(`ripgrep: ${rg.path} (${rg.source})`);
  if (!local)
    log.info(
      'Workspace is not on the local disk: reading through workspace.fs without streaming; search_files and find_files are not available.',
    );
  const ripgrep = rg ? createRipgrep(rg.path) : undefined;
  const search = ripgrep && local ? createRipgrepSearch(ripgrep) : undefined;

  const decider: ScriptedDecider | undefined = scriptedDeciderFromEnvironment(context.extensionMode);
  if (decider)
    log.warn(`Test decider active (${decider.answer}): modal confirmations are answered by the test script.`);
  const gate = new VscodeGate({
    decider: (): Decider => decider ?? modalDecider,
    trusted: () => vscode.workspace.isTrusted,
    hosts: (): SessionHosts | undefined => session.shell?.hosts,
  });

  // Commands run only inside the OS sandbox; where it is missing run_shell_command refuses and says what to install.
  const sandbox = srtSandbox({ ripgrepPath: rg?.path });
  // Checked (which loads the sandbox library) on first need, not at activation: the first command, or Show Gate Status.
  let shellAvailability: SandboxAvailability | undefined;
  let shellCheck: Promise<void> | undefined;
  const checkShell = (): Promise<void> =>
    (shellCheck ??= sandbox.availability().then((a) => {
      shellAvailability = a;
      log.info(
        a.available
          ? `Shell sandbox: available (${a.mechanism}).`
          : `Shell sandbox: not available (${a.why}); run_shell_command refuses every command. ${a.install}`,
      );
    }));
  const spool = await spoolFolder(context);
  const stateDir = stateFolder(context, local, roots);
  const session: Session = assemble({
    home: os.homedir(),
    env: () => process.env,
    fs,
    roots: () => roots,
    gate: gate.gate,
    policy: () => settings.policy,
    ...(search ? { search } : {}),
    ...(ripgrep ? { ripgrep } : {}),
    clock: { now: () => Date.now() },
    vocabulary: VSCODE_VOCABULARY,
    log,
    spoolDir: spool.dir,
    ...(stateDir !== undefined ? { stateDir } : {}),
    limits: () => settings.limits,
    writeRoots: () => scopedWriteRoots(settings).writeRoots,
    allowWrites: () => vscode.workspace.isTrusted,
    editors: openEditors(local),
    encodingOf: fileEncodingOf(local),
    problems: vscodeProblems(local),
    outline: vscodeOutline(local),
    shell: {
      sandbox,
      allowedDomains: () => settings.shell.allowedDomains,
      maxTimeoutMs: () => settings.shell.maxTimeoutMs,
      askHost: gate.askHost,
      review: () => settings.shell.review,
      readFolders: () => settings.shell.readFolders,
    },
  });

  // Set once the staged review is registered (below): a save in a chat asks with its set open.
  const late: { askBeforeWriting?: AskBeforeWriting } = {};
  const hooks: ToolHostHooks = {
    confirmationExtras: (writes) => saveConfirmationExtras({ session }, writes),
    aroundInvoke: (writes, run, signal) => withNewDiagnostics({ session, local }, writes, run, signal),
    askBeforeWriting: (call, writes, toolInvocationToken, token) =>
      late.askBeforeWriting?.(call, writes, toolInvocationToken, token) ?? Promise.resolve(false),
  };
  // Before any tool is offered: a set a crashed window, a killed CLI or MCP server left half applied is finished or rolled back.
  const recovered = await session.recoverInterruptedSets().catch((e: unknown) => {
    log.warn(`Interrupted change sets could not be recovered: ${e instanceof Error ? e.message : String(e)}`);
    return [];
  });
  for (const set of recovered) {
    void (set.outcome === 'left'
      ? vscode.window.showWarningMessage(`Workspace Tools: ${set.message}`)
      : vscode.window.showInformationMessage(`Workspace Tools: ${set.message}`));
  }
  const tools = new LanguageModelToolRegistrations(session, hooks);
  context.subscriptions.push(tools);
  const host: Host = { context, session, settings: () => settings, gate, log, tools, local, recovered };

  context.subscriptions.push(
    vscode.workspace.onDidChangeConfiguration((e) => {
      if (!e.affectsConfiguration(SECTION)) return;
      settings = readSettings();
      reportSettingErrors(settings);
      log.info(gateStatusLine(gateStatus()));
    }),
    vscode.workspace.onDidGrantWorkspaceTrust(() => tools.sync()),
    vscode.workspace.onDidChangeWorkspaceFolders(() => {
      const next = vscode.workspace.workspaceFolders ?? [];
      if (allFoldersLocal(next) !== local)
        log.warn(
          'The workspace folders changed between local and remote; reload the window for Workspace Tools to switch backends.',
        );
      roots = workspaceRoots(next, local);
    }),
  );
  void session.artifacts.start().then((removed) => {
    if (removed) log.info(`Removed ${removed} stale artifact spool folder(s) from an earlier run.`);
  });
  registerCommands(host);
  const provider = registerStagedReview(host);
  late.askBeforeWriting = (call, writes, toolInvocationToken, token) =>
    askToSave(host, provider, { call, writes, toolInvocationToken, token });
  const gateStatus = (): GateStatusInput => ({
    settings,
    writeRoots: scopedWriteRoots(settings),
    trusted: vscode.workspace.isTrusted,
    allTools: vscode.lm.tools,
    autoApproveAll: vscode.workspace.getConfiguration('chat.tools.global').get<unknown>('autoApprove') === true,
    shell: shellAvailability,
    sessionHosts: session.shell?.hosts.remembered ?? [],
  });
  context.subscriptions.push(registerGateStatus(gateStatus, checkShell));
  context.subscriptions.push(registerMcpSetup(context.extensionPath));
  tools.sync();
  log.info(gateStatusLine(gateStatus()));
  log.info(
    `Workspace Tools active: ${tools.names.length} tools registered (${tools.names.join(', ')}); workspace ${vscode.workspace.isTrusted ? 'trusted' : 'untrusted'}.`,
  );

  return {
    dispose: async () => {
      await session.dispose();
      await sandbox.dispose();
      if (spool.temporary) await fsp.rm(spool.dir, { recursive: true, force: true });
    },
    exports:
      context.extensionMode === vscode.ExtensionMode.Test
        ? {
            host,
            decider,
            prepare: (name, input) => tools.confirmation(TOOLS[name], input),
            tool: (name) => tools.implementation(TOOLS[name]),
          }
        : undefined,
  };
}
