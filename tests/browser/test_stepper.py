"""RewriteStepper in a real JupyterLab: run notebook 07, step with the arrow keys, read the card and the marks."""

from __future__ import annotations

from browser_lab import ROOT, drawn, open_notebook, stripped_copy, wait_drawn


def test_stepping_a_plus_a_to_the_tenth_with_the_keyboard(lab, browser):
    stripped_copy(ROOT / "notebooks" / "07_rewrites.ipynb", lab.root / "07_rewrites.ipynb")
    nb = open_notebook(browser, lab, "07_rewrites.ipynb")
    nb.run_all()
    stepper = nb.page.locator(".sl-stepper").first
    stepper.wait_for()
    # the notebook left the first stepper at the fusion step: go back to the start with Home
    stepper.focus()
    before = drawn(stepper)
    nb.page.keyboard.press("Home")
    wait_drawn(nb, stepper, before)
    assert stepper.get_attribute("data-step") == "0"
    assert "step 0" in stepper.locator(".sl-position").inner_text()
    after = stepper.locator(".sl-after .sl-picture")
    assert after.locator("g.node.apply").count() >= 2  # the unoptimized graph: several operations
    seen_fused = False
    for k in range(1, 4):
        before = drawn(stepper)
        nb.page.keyboard.press("ArrowRight")
        wait_drawn(nb, stepper, before)
        assert stepper.get_attribute("data-step") == str(k)
        card = stepper.locator(".sl-card").inner_text()
        rows = stepper.locator(".sl-step-list li.sl-step")
        assert "sl-current" in (rows.nth(k - 1).get_attribute("class") or "")
        if "elemwise_fusion" in card:
            assert "applied" in card and "fused 2 Elemwise nodes" in card
            # removed red in "before", created green in "after"
            assert stepper.locator(".sl-before g.node.removed").count() >= 2
            created = stepper.locator(".sl-after g.node.created")
            assert created.count() == 1 and "Composite" in created.text_content()
            seen_fused = True
        if "inplace_elemwise" in card:
            assert "refused" in card and "protected graph input" in card
    assert seen_fused
    # the rule's source, on demand
    before = drawn(stepper)
    stepper.get_by_role("button", name="show the source code of this rule").click()
    wait_drawn(nb, stepper, before)
    assert "def " in stepper.locator(".sl-source").inner_text()
    # unoptimized | optimized side by side
    before = drawn(stepper)
    stepper.get_by_role("checkbox", name="unoptimized | optimized").check()
    wait_drawn(nb, stepper, before)
    assert stepper.locator(".sl-before .sl-pane-title").inner_text().startswith("unoptimized")
    assert stepper.locator(".sl-after g.node.apply").count() == 1
    assert stepper.locator(".sl-before g.node.apply").count() >= 2
    assert not nb.errors, nb.errors


def test_an_exported_page_steps_without_a_kernel(browser, tmp_path):
    import symlab.tensor as st
    from symlab.notebook.stepper import RewriteStepper

    a = st.dvector('<img src=x onerror="window.pwned=1">')
    path = RewriteStepper(a + a**10).export_html(tmp_path / "steps.html")
    page = browser.new_page()  # the browser's pages prefer reduced motion: nothing may move
    page.add_init_script("window.__moved = []; Element.prototype.animate = function () { window.__moved.push(1); };")
    errors = []
    page.on("pageerror", lambda err: errors.append(str(err)))
    page.goto(path.as_uri())
    stepper = page.locator(".sl-stepper")
    stepper.wait_for()
    assert stepper.get_attribute("data-step") == "0"
    stepper.focus()
    for k in (1, 2):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.querySelector('.sl-stepper').dataset.step === '{k}'")
    assert "elemwise_fusion" in stepper.locator(".sl-card").inner_text()
    assert stepper.locator(".sl-after g.node.created").count() == 1
    assert "def " in stepper.locator(".sl-source").inner_text()  # the rule's source travels with the page
    assert page.evaluate("() => window.pwned") is None and not errors, errors
    assert page.evaluate("() => window.__moved") == []  # reduced motion: nothing moves
    page.close()
    # without reduced motion, the nodes that keep their key move to their new place
    # (each call of Element.animate is recorded: an animation may be over before the test looks)
    page = browser.new_page()
    page.emulate_media(reduced_motion="no-preference")
    page.add_init_script("""
        window.__moved = [];
        const animate = Element.prototype.animate;
        Element.prototype.animate = function (...args) {
            window.__moved.push(this.dataset.key);
            return animate.apply(this, args);
        };
    """)
    page.goto(path.as_uri())
    page.locator(".sl-stepper").focus()
    for k in (1, 2):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => document.querySelector('.sl-stepper').dataset.step === '{k}'")
    moving = page.evaluate("() => window.__moved")
    assert moving and all(moving), moving
    page.close()


def test_play_moves_through_the_steps_and_phases_are_headed(lab, browser):
    from browser_lab import write_notebook

    write_notebook(lab.root / "play.ipynb", [
        "import symlab, symlab.tensor as T\n"
        "a = T.vector('a')\n"
        "from symlab.notebook import RewriteStepper\n"
        "RewriteStepper(a + a ** 10)",
    ])
    nb = open_notebook(browser, lab, "play.ipynb")
    nb.run_all()
    stepper = nb.page.locator(".sl-stepper").first
    stepper.wait_for()
    headers = stepper.locator(".sl-step-list li.sl-phase").all_inner_texts()
    assert headers == ["canonicalize: 1 applied, 0 refused", "fusion: 1 applied, 0 refused",
                       "inplace: 0 applied, 1 refused"]
    stepper.locator("select.sl-select").select_option("500")
    stepper.get_by_role("button", name="play the steps at the chosen speed (again: pause)").click()
    nb.page.wait_for_function("() => document.querySelector('.sl-stepper').dataset.step === '3'", timeout=15_000)
    assert not nb.errors, nb.errors
