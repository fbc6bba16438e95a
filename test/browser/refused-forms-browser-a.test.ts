import { refusedFormTests } from './refused-forms.shared';

// Half 1 of 2 of the refused-forms browser checks (test/browser/refused-forms.shared.ts), split so that CI's two
// workers share them.
refusedFormTests({ index: 0, of: 2 });
