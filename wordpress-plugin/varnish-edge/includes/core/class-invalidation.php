<?php
/**
 * A set of things to invalidate.
 *
 * @package VarnishEdge
 */

namespace VarnishEdge;

/**
 * Mergeable value object: keys and URLs, hard or soft, path prefixes, or the whole site; and the
 * pages each edge node re-fetches once it applied them (`refresh`, most important first).
 */
class Invalidation {

	/** @var array<string,bool> */
	public $hard_tags = array();
	/** @var array<string,bool> */
	public $soft_tags = array();
	/** @var array<string,bool> */
	public $hard_urls = array();
	/** @var array<string,bool> */
	public $soft_urls = array();
	/** @var array<string,bool> */
	public $prefixes = array();
	/** @var bool */
	public $all = false;
	/** @var array<string,bool> */
	public $reasons = array();
	/** @var array<string,bool> Pages to re-fetch after the invalidation, in priority order. */
	public $refresh = array();
	/** @var bool Also re-fetch the pages every page links to (home, menus, newest posts): set for site-wide changes. */
	public $refresh_site = false;

	/**
	 * Add keys.
	 *
	 * @param string[] $tags Keys.
	 * @param bool     $soft Soft purge.
	 */
	public function tags( array $tags, bool $soft = false ): static {
		foreach ( $tags as $tag ) {
			if ( is_string( $tag ) && '' !== $tag ) {
				if ( $soft ) {
					$this->soft_tags[ $tag ] = true;
				} else {
					$this->hard_tags[ $tag ] = true;
				}
			}
		}
		return $this;
	}

	/**
	 * Add exact URLs.
	 *
	 * @param string[] $urls URLs.
	 * @param bool     $soft Soft purge.
	 */
	public function urls( array $urls, bool $soft = false ): static {
		foreach ( $urls as $url ) {
			if ( is_string( $url ) && '' !== $url ) {
				if ( $soft ) {
					$this->soft_urls[ $url ] = true;
				} else {
					$this->hard_urls[ $url ] = true;
				}
			}
		}
		return $this;
	}

	/**
	 * Add URL prefixes (every URL under them, hard).
	 *
	 * @param string[] $urls URL prefixes.
	 */
	public function prefixes( array $urls ): static {
		foreach ( $urls as $url ) {
			if ( is_string( $url ) && '' !== $url ) {
				$this->prefixes[ $url ] = true;
			}
		}
		return $this;
	}

	/**
	 * Invalidate the whole site.
	 */
	public function everything(): static {
		$this->all = true;
		return $this;
	}

	/**
	 * Pages to re-fetch once the invalidation is applied, most important first.
	 *
	 * @param string[] $urls URLs.
	 */
	public function refresh( array $urls ): static {
		foreach ( $urls as $url ) {
			if ( is_string( $url ) && '' !== $url ) {
				$this->refresh[ $url ] = true;
			}
		}
		return $this;
	}

	/**
	 * Re-fetch the site's most visited pages too (resolved when the batch is built).
	 */
	public function refresh_site(): static {
		$this->refresh_site = true;
		return $this;
	}

	/**
	 * Add a human-readable reason.
	 */
	public function reason( string $reason ): static {
		$this->reasons[ $reason ] = true;
		return $this;
	}

	/**
	 * Merge another invalidation into this one.
	 */
	public function merge( Invalidation $other ): static {
		$this->hard_tags += $other->hard_tags;
		$this->soft_tags += $other->soft_tags;
		$this->hard_urls += $other->hard_urls;
		$this->soft_urls += $other->soft_urls;
		$this->prefixes  += $other->prefixes;
		$this->reasons   += $other->reasons;
		$this->refresh   += $other->refresh;
		$this->all        = $this->all || $other->all;
		$this->refresh_site = $this->refresh_site || $other->refresh_site;
		return $this;
	}

	/**
	 * Whether there is nothing to invalidate.
	 */
	public function is_empty(): bool {
		return ! $this->all && ! $this->hard_tags && ! $this->soft_tags && ! $this->hard_urls && ! $this->soft_urls && ! $this->prefixes;
	}
}
