"""The confirmation study: the same experiments on other seeds or vocabularies (``runs``), every claim judged again."""
