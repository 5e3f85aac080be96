/** The bundle's directory. */
export declare const DIST: URL
/** Why the bundle cannot run, or undefined when it is current. */
export declare function bundleStaleness(dist?: URL): string | undefined
