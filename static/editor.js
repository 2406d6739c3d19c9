// A textarea with line numbers beside it, for the lab's Lua steps: Redis names an error's line
// (`user_script:3`), so the student must see which line is 3. No library (nothing can be
// fetched from npm here, and a lab step is a few lines): a gutter element whose numbers follow
// the textarea's lines and its scroll. Lines do not wrap, so a number is a line of the script.

const MIN_ROWS = 3;
const MAX_ROWS = 18;

export class Editor {
  /** Builds the editor inside `host`; `id` names the textarea (the tests fill it by id). */
  constructor(host, id) {
    this.root = document.createElement('div');
    this.root.className = 'editor';
    this.gutter = document.createElement('div');
    this.gutter.className = 'gutter';
    this.gutter.setAttribute('aria-hidden', 'true');
    this.area = document.createElement('textarea');
    this.area.id = id;
    this.area.spellcheck = false;
    this.area.wrap = 'off';
    this.area.autocapitalize = 'off';
    this.area.setAttribute('autocomplete', 'off');
    this.root.append(this.gutter, this.area);
    host.appendChild(this.root);
    this.marked = 0; // the line an error names, 0 for none
    this.lines = 0;
    this.area.addEventListener('input', () => this.refresh());
    this.area.addEventListener('scroll', () => { this.gutter.scrollTop = this.area.scrollTop; });
    this.refresh();
  }

  get value() {
    return this.area.value;
  }

  set value(text) {
    this.area.value = text;
    this.refresh();
  }

  /** Marks line `n` (1-based) as the one an error names; 0 clears it. */
  mark(n) {
    this.marked = n;
    this.lines = 0; // draw the gutter again
    this.refresh();
  }

  /** Numbers as many lines as the text has, and grows the box with them (to a bound, then it
   * scrolls), so a short step takes little room and a long one needs no dragging. */
  refresh() {
    const lines = this.area.value.split('\n').length;
    const rows = Math.min(MAX_ROWS, Math.max(MIN_ROWS, lines));
    this.area.rows = rows;
    if (lines !== this.lines) {
      this.lines = lines;
      const numbers = [];
      for (let i = 1; i <= Math.max(lines, rows); i += 1) {
        const n = document.createElement('span');
        n.textContent = i <= lines ? String(i) : '';
        if (i === this.marked) n.className = 'marked';
        numbers.push(n);
      }
      this.gutter.replaceChildren(...numbers);
    }
    this.gutter.scrollTop = this.area.scrollTop;
  }
}
