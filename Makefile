# One entry point for everything. `make test` installs what is missing, then runs every suite.
SHELL := /bin/bash
SUITES ?= $(sort $(basename $(notdir $(wildcard scripts/suites/*.sh))))

.PHONY: test deps $(addprefix test-,$(SUITES)) help

help:
	@echo "make test         install missing dependencies, run every suite ($(SUITES))"
	@echo "make test-<suite> run one suite without the install step"

test: deps
	@scripts/run-suites.sh $(SUITES)

deps:
	@scripts/install-deps.sh

$(addprefix test-,$(SUITES)): test-%:
	@scripts/run-suites.sh $*
