/**
 * The store contract as one test suite (`book-catalogue/conformance`): every store the service
 * can run on passes it, the file store and PostgreSQL's alike, and so can a third party's. It
 * declares its tests with the functions it is given, so it imports no test runner:
 *
 *   import { describe, it } from 'node:test';
 *   storeConformance(myTarget, { describe, it });
 */
import { conditionRules } from './conformance/conditions.ts';
import { durabilityRules } from './conformance/durability.ts';
import { feedRules } from './conformance/feed.ts';
import { idRules } from './conformance/ids.ts';
import { listRules } from './conformance/lists.ts';
import type { ConformanceTarget, TestFunctions } from './conformance/target.ts';

export type { CatalogueUnderTest, ConformanceTarget, Opener, TestFunctions } from './conformance/target.ts';

/** Declares the whole suite for `target` under one describe block named `name`. */
export function storeConformance(name: string, target: ConformanceTarget, test: TestFunctions): void {
  test.describe(`store contract: ${name}`, () => {
    idRules(target, test);
    durabilityRules(target, test);
    conditionRules(target, test);
    listRules(target, test);
    feedRules(target, test);
  });
}
