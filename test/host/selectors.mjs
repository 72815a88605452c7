// VS Code 1.139 workbench DOM selectors. These are VS Code internals, not an API: when an upgrade
// moves them, this is the one module to change. Several widgets exist twice in the DOM (one copy
// hidden), hence the `:visible` (a playwright pseudo-class) on the clickable ones.

export const WORKBENCH = {
  root: '.monaco-workbench',
  statusBar: '.part.statusbar',
  sideBar: '.part.sidebar',
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
};

export const PALETTE = {
  widget: '.quick-input-widget',
  input: '.quick-input-widget .quick-input-box input',
  /** Rows of the (virtualised) list: only the visible ones are in the DOM. */
  row: '.quick-input-widget .quick-input-list .monaco-list-row',
  rowLabel: '.quick-input-widget .quick-input-list .monaco-list-row .label-name',
  focusedRow: '.quick-input-widget .quick-input-list .monaco-list-row.focused',
};

export const CHAT = {
  /** Chat lives in the right (auxiliary) side bar and opens in Agent mode. */
  input: '.part.auxiliarybar .interactive-input-editor',
  modelPicker: '.part.auxiliarybar .model-picker-name',
  modelPickerRow: '.action-widget .monaco-list-row',
  response: '.interactive-item-container.interactive-response',
  request: '.interactive-item-container.interactive-request',
  toolConfirmation: '.chat-tool-invocation-part.has-confirmation:visible',
  /** "Allow in this Session" (a split button) and "Skip". */
  confirmationButton: '.chat-confirmation-widget-buttons .monaco-button:visible',
  /** The split button's dropdown; its menu holds "Allow Once", "Allow in this Workspace", "Always Allow". */
  confirmationDropdown: '.chat-confirmation-widget-buttons .monaco-dropdown-button:visible',
  menuItem: '.monaco-menu .action-menu-item:visible',
};

/** Labels VS Code 1.139 puts on the tool-confirmation buttons and menu. */
export const CHAT_LABELS = {
  allowSession: 'Allow in this Session',
  allowOnce: 'Allow Once',
  allowWorkspace: 'Allow in this Workspace',
  alwaysAllow: 'Always Allow',
  skip: 'Skip',
};
