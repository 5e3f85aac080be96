import fc from 'fast-check'

// Seeded randomness only: every property test in the workspace runs from one fixed seed
// (override with KEEL_FC_SEED to explore), so a failure reproduces on every machine.
fc.configureGlobal({ seed: Number(process.env.KEEL_FC_SEED ?? 20261130) })
