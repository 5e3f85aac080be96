/** `plan.mode`: whether plan mode is in force, and the way to switch it (a logged `plan/mode`). */
export interface PlanModeService {
  /** Whether plan mode is in force now (the latest `plan/mode`). */
  active(): boolean
  /**
   * Enters or leaves plan mode as the person's act: appends `plan/mode` (nothing when it
   * is already so) and tells the model with a developer message before its next step.
   * Returns whether anything changed.
   */
  set(active: boolean): boolean
}

declare module '@keel/tools' {
  interface ServiceMap {
    /** Plan mode (from @keel/plan-mode): read it, enter it, leave it. */
    'plan.mode': PlanModeService
  }
}
