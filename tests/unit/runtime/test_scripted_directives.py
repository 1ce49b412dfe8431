"""The scripted agent's prompt parsing: directives, context block, echo and parent questions."""

from __future__ import annotations

from pathlib import Path

from kandev.runtime.scripted_directives import STATE_FILE, Step, load_answer, plan, reply_shape, save_answer


def test_say_lines_become_say_steps_in_order() -> None:
    assert plan("/say one\nnoise\n/say two") == [Step("say", text="one"), Step("say", text="two")]


def test_a_prompt_without_directives_echoes_its_first_non_empty_line() -> None:
    assert plan("\n\n  hello there  \nsecond line") == [Step("say", text="hello there")]


def test_the_context_block_is_ignored_including_directives_inside_it() -> None:
    prompt = "<kandev-context>\n/say hidden\ntask: T1\n</kandev-context>\nwhat now?"
    assert plan(prompt) == [Step("say", text="what now?")]


def test_an_empty_prompt_after_the_context_block_has_no_steps() -> None:
    assert plan("<kandev-context>\nctx\n</kandev-context>\n") == []


def test_tool_directive_parses_name_and_json_object() -> None:
    assert plan('/tool echo {"text": "hi"}') == [Step("tool", tool="echo", arguments={"text": "hi"})]


def test_tool_directive_without_arguments_sends_an_empty_object() -> None:
    assert plan("/tool list_tasks_kandev") == [Step("tool", tool="list_tasks_kandev")]


def test_tool_directive_with_bad_json_carries_an_error_instead_of_arguments() -> None:
    (step,) = plan("/tool echo {nope")
    assert step.kind == "tool" and step.tool == "echo"
    assert step.error is not None and "not valid JSON" in step.error


def test_tool_directive_with_a_non_object_argument_is_an_error() -> None:
    (step,) = plan("/tool echo [1, 2]")
    assert step.error is not None and "JSON object" in step.error


def test_sleep_fail_end_and_on_question_are_recognised() -> None:
    steps = plan("/sleep 1.5\n/fail broken\n/end\n/on-question yes")
    assert [s.kind for s in steps] == ["sleep", "fail", "end", "on-question"]
    assert steps[0].seconds == 1.5 and steps[1].text == "broken" and steps[3].text == "yes"


def test_a_sleep_without_a_number_is_an_ordinary_line() -> None:
    assert plan("/sleep soon") == [Step("say", text="/sleep soon")]


def test_unknown_slash_lines_are_ignored_but_not_directives() -> None:
    assert plan("/unknown x\n/say ok") == [Step("say", text="ok")]


def test_directive_names_need_a_word_boundary() -> None:
    assert plan("/sayhello") == [Step("say", text="/sayhello")]


def test_reply_shape_needs_both_ids() -> None:
    assert reply_shape('{"task_id": "T1", "reply_to_question_id": "Q1"}') is not None
    assert reply_shape('Reply with: {"tool": "message_task_kandev", "task_id": "T1", "reply_to_question_id": "Q1"}')
    assert reply_shape('{"task_id": "T1"}') is None
    assert reply_shape("{not json}") is None


def test_a_parent_question_becomes_a_reply_call_only_with_a_remembered_answer() -> None:
    prompt = 'Parent asks: which DB?\n{"task_id": "T1", "reply_to_question_id": "Q1"}'
    assert plan(prompt) == [Step("say", text="Parent asks: which DB?")]
    (step,) = plan(prompt, on_question="PostgreSQL")
    assert step == Step(
        "tool",
        tool="message_task_kandev",
        arguments={"task_id": "T1", "reply_to_question_id": "Q1", "prompt": "PostgreSQL"},
    )


def test_a_reply_shape_inside_the_context_block_is_answered_too() -> None:
    prompt = '<kandev-context>\n{"task_id": "T1", "reply_to_question_id": "Q9"}\n</kandev-context>\n/say hi'
    steps = plan(prompt, on_question="ok")
    assert [s.kind for s in steps] == ["tool", "say"]
    assert steps[0].arguments["reply_to_question_id"] == "Q9"


def test_the_answer_is_remembered_in_the_working_directory(tmp_path: Path) -> None:
    assert load_answer(str(tmp_path)) is None
    save_answer(str(tmp_path), "go ahead")
    assert (tmp_path / STATE_FILE).exists()
    assert load_answer(str(tmp_path)) == "go ahead"


def test_a_corrupt_state_file_means_no_answer(tmp_path: Path) -> None:
    (tmp_path / STATE_FILE).write_text("{broken")
    assert load_answer(str(tmp_path)) is None


def test_mcp_servers_is_a_directive_and_a_tool_may_name_its_server() -> None:
    assert plan('/mcp-servers\n/tool docs/search {"q": "x"}') == [
        Step("mcp-servers"),
        Step("tool", tool="docs/search", arguments={"q": "x"}),
    ]


def test_write_takes_the_lines_up_to_end_write_as_they_are() -> None:
    steps = plan("/write src/app.py\n  indented line\n\nlast line\n/end-write\n/say done")
    assert steps == [
        Step("write", text="src/app.py", content="  indented line\n\nlast line\n"),
        Step("say", text="done"),
    ]


def test_directives_inside_a_write_block_are_content_not_directives() -> None:
    [step] = plan("/write notes.md\n/say not said\n/end-write")
    assert step.content == "/say not said\n"


def test_a_write_without_end_write_takes_the_rest_of_the_prompt() -> None:
    [step] = plan("/write a.txt\none\ntwo")
    assert step.content == "one\ntwo\n"


def test_delete_and_run_carry_their_path_and_command() -> None:
    assert plan("/delete old.txt\n/run make test > out.txt") == [
        Step("delete", text="old.txt"),
        Step("run", text="make test > out.txt"),
    ]


def test_write_delete_and_run_without_an_argument_carry_an_error() -> None:
    steps = plan("/write\n/end-write\n/delete\n/run")
    assert [(s.kind, s.error) for s in steps] == [
        ("write", "/write needs a path"),
        ("delete", "/delete needs a path"),
        ("run", "/run needs a command"),
    ]
