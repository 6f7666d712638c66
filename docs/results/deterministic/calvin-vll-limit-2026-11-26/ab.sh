#!/bin/bash
# Alternates two builds: `main` (before) and the admission-limit build (after), calvin vs calvin-vll.
# Usage: BEFORE=path AFTER=path T=2 ./ab.sh > raw.txt
for round in 1 2 3; do
  for ci in 0.0001 0.01 0.1; do
    for b in before after; do
      bin=$BEFORE; [ $b = after ] && bin=$AFTER
      echo "# round $round ci $ci build $b"
      $bin bench -w vll-micro --ci $ci -p calvin,calvin-vll,calvin,calvin-vll -t ${T:-2} --seconds 1 --warmup 0.3 --reps 1 --quiet 2>&1 | grep -E "^calvin"
    done
  done
done
