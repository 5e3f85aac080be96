declare const brandKey: unique symbol

/**
 * A nominal marker on a primitive: `Brand<number, 'SessionSeq'>` is a number that the
 * compiler will not confuse with any other number. The marker exists only at compile
 * time; on disk a branded value is its base type, and the persistence catalog
 * fingerprints it as the base type.
 */
export type Brand<T, Name extends string> = T & { readonly [brandKey]: Name }
