"""Stages as earlier versions ran them, to make the caches those versions left."""

import dataclasses

from crawler.defaults import SETTINGS
from crawler.stages.boilerplate import BoilerplateStage


class RepetitionAloneStage(BoilerplateStage):
    """The boilerplate analysis by repetition alone, before where a block sits counted."""

    @classmethod
    def from_crawler(cls, crawler):
        stage = super().from_crawler(crawler)
        stage.params = dataclasses.replace(stage.params, position=False)
        return stage


#: PROCESSING_STAGES with the boilerplate analysis by repetition alone
REPETITION_ALONE = ",".join(
    "tests.old_stages.RepetitionAloneStage" if path.endswith(".BoilerplateStage") else path
    for path in SETTINGS["PROCESSING_STAGES"]
)
