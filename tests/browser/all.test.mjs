// Every page in a real browser, one fleet and one Chromium for all (harness.mjs starts and
// stops them): the dashboard, the lab page, a class, the class vote, the run viewer, each
// page's tests in its own file, run in this order; then the phone's way back in (join).

import './dashboard.mjs';
import './lab.mjs';
import './class.mjs';
import './vote.mjs';
import './join.mjs';
import './viewer.mjs';
