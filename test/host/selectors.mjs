// VS Code 1.139 workbench DOM selectors. These are VS Code internals, not an API: when an upgrade
// moves them, this is the one module to change. Several widgets exist twice in the DOM (one copy
// hidden), hence the `:visible` (a playwright pseudo-class) on the clickable ones.

export const WORKBENCH = {
  root: '.monaco-workbench',
  statusBar: '.part.statusbar',
  sideBar: '.part.sidebar',
  /** The secondary side bar, where the chat lives. */
  auxiliaryBar: '.part.auxiliarybar',
  activityBarItem: '.part.activitybar .action-item',
  notificationToast: '.notification-toast',
  /** A modal dialog (e.g. a confirmation shown with `showWarningMessage(..., {modal: true})`). */
  dialog: '.monaco-dialog-box',
  dialogMessage: '.monaco-dialog-box .dialog-message-text',
  dialogDetail: '.monaco-dialog-box .dialog-message-detail',
  dialogButton: '.monaco-dialog-box .dialog-buttons .monaco-button',
  /** Editor tabs; the label text is the file (or diff) title. */
  tab: '.tabs-container .tab',
  activeTab: '.tabs-container .tab.active',
  tabLabel: '.tabs-container .tab .label-name',
  /** View (pane) titles in the side bars. */
  paneHeaderTitle: '.pane-header .title',
  viewletTitle: '.composite.title .title-label',
  editor: '.editor-instance .monaco-editor',
  /** A modal editor (e.g. "Language Models") and the block that covers the workbench behind it. */
  modalEditor: '.monaco-modal-editor-block',
};

export const PALETTE = {
  widget: '.quick-input-widget',
  input: '.quick-input-widget .quick-input-box input',
  /** Rows of the (virtualised) list: only the visible ones are in the DOM. */
  row: '.quick-input-widget .quick-input-list .monaco-list-row',
  rowLabel: '.quick-input-widget .quick-input-list .monaco-list-row .label-name',
  /** The label inside a row. */
  labelInRow: '.label-name',
  focusedRow: '.quick-input-widget .quick-input-list .monaco-list-row.focused',
};

export const CHAT = {
  /** Chat lives in the right (auxiliary) side bar and opens in Agent mode. */
  input: '.part.auxiliarybar .interactive-input-editor',
  modelPicker: '.part.auxiliarybar .model-picker-name',
  modelPickerRow: '.action-widget .monaco-list-row',
  /** The agent picker ("Agent", "Ask", "Plan", then contributed agents such as "Workspace Tools") and its label. */
  agentPicker: '.part.auxiliarybar .chat-mode-picker-item:visible',
  agentPickerRow: '.action-widget .monaco-list-row',
  response: '.interactive-item-container.interactive-response',
  request: '.interactive-item-container.interactive-request',
  toolConfirmation: '.chat-tool-invocation-part.has-confirmation:visible',
  /** "Allow in this Session" (a split button) and "Skip". */
  confirmationButton: '.chat-confirmation-widget-buttons .monaco-button:visible',
  /** The split button's dropdown; its menu holds "Allow Once", "Allow in this Workspace", "Always Allow". */
  confirmationDropdown: '.chat-confirmation-widget-buttons .monaco-dropdown-button:visible',
  menuItem: '.monaco-menu .action-menu-item:visible',
  /** The open context menu, one of its entries (focused with the keyboard) and an entry's label. */
  menu: '.monaco-menu:visible',
  menuEntry: '.monaco-menu .action-item',
  menuEntryLabel: '.action-label',
  /** The close button of a notice docked above the chat input (e.g. "Set BYOK utility models"). */
  inputNoticeDismiss: '.chat-input-notification-widget .chat-input-notification-dismiss',
};

/** Labels VS Code 1.139 puts on the tool-confirmation buttons and menu. */
export const CHAT_LABELS = {
  allowSession: 'Allow in this Session',
  allowOnce: 'Allow Once',
  allowWorkspace: 'Allow in this Workspace',
  alwaysAllow: 'Always Allow',
  skip: 'Skip',
  /** The main button of a save's own in-chat confirmation (src/vscode/staged/save-review.ts). */
  save: 'Save',
};

/** What the agent-mode e2e checks besides the chat: the staged review and the status bar. */
export const REVIEW = {
  /** A diff editor in the editor area; its two sides are `.editor.original` and `.editor.modified`. */
  diffEditor: '.part.editor .monaco-diff-editor',
  diffOriginalLines: '.part.editor .monaco-diff-editor .editor.original .view-lines',
  diffModifiedLines: '.part.editor .monaco-diff-editor .editor.modified .view-lines',
  /** The staged (right, editable) side of the diff editor: the Monaco editor inside it takes the focus. */
  diffModifiedEditor: '.part.editor .monaco-diff-editor .editor.modified',
  /** The diff's character-level highlights of inserted (staged side) and removed (disk side) text. */
  diffInsertedText: '.part.editor .monaco-diff-editor .editor.modified .char-insert',
  diffRemovedText: '.part.editor .monaco-diff-editor .editor.original .char-delete',
  /** Status bar entries (an extension's `StatusBarItem` among them). */
  statusBarItem: '.part.statusbar .statusbar-item',
  /** Rows of the tree views shown in the (left) side bar. */
  sideBarRow: '.part.sidebar .monaco-list-row',
  /** A view's welcome content (shown while its tree is empty). */
  sideBarWelcome: '.part.sidebar .welcome-view-content',
};

/** Labels of VS Code's own modal dialog buttons. */
export const DIALOG_LABELS = {
  cancel: 'Cancel',
};

/** An extension's input box or quick pick (`showInputBox`, `showQuickPick`), which reuse the palette's widget. */
export const QUICK_INPUT = {
  widget: '.quick-input-widget',
  title: '.quick-input-widget .quick-input-title',
  input: '.quick-input-widget .quick-input-box input',
  /** A row's `aria-label` holds its label and its detail line. */
  row: '.quick-input-widget .quick-input-list .monaco-list-row',
};

/** What the palette e2e reads besides dialogs and the review (test/e2e/palette.e2e.mjs, scripts/sandbox.mjs). */
export const PANES = {
  /** An editor tab by its resource's base name (the label itself may split name and suffix). */
  tabByResource: (name) => `.tabs-container .tab[data-resource-name="${name}"]`,
  activeEditorLines: '.part.editor .editor-instance .monaco-editor .view-lines:visible',
  /** The Monaco editor of the active editor group (the one a palette command acts on). */
  activeGroupEditor: '.part.editor .editor-group-container.active .editor-instance .monaco-editor',
  /** The message an editor shows where it refuses an edit ("Cannot edit in read-only editor"). */
  editorOverlayMessage: '.monaco-editor-overlaymessage',
  /** Workbench hovers (tab tooltips and the like). */
  hover: '.workbench-hover',
  /** The status bar's "Ln 2, Col 1". */
  cursorPosition: '.part.statusbar [id="status.editor.selection"]',
  /** Tree rows of the side bar: label and description (e.g. "+1 −0 · m2"). */
  sideBarRowLabel: '.label-name',
  sideBarRowDescription: '.label-description',
  /** The panel (Output) and the lines of its editor (wrapped lines are split across `.view-line`s). */
  panel: '.part.panel',
  panelLine: '.part.panel .monaco-editor .view-line',
  /** The sash between the primary side bar and the editor (drag it to widen the side bar). */
  sideBarSash: '.monaco-sash.vertical.primary-sidebar-sash',
  /** The activity bar entry of a view container, by its title. */
  activityBarItem: (title) => `.part.activitybar .action-item .action-label[aria-label^="${title}"]`,
};

/**
 * Parts of an in-chat tool confirmation (inside CHAT.toolConfirmation): the tool's own title and
 * markdown message, apart from the "Input" block in which VS Code shows the raw JSON arguments.
 */
export const CHAT_CONFIRMATION = {
  title: '.chat-confirmation-widget-title',
  message: '.chat-confirmation-widget-message .chat-markdown-part',
};
